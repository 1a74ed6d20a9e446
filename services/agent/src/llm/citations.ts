/**
 * Drops `[n]` markers that name no passage the model was given, as text streams through: a
 * bracket that could open a marker is held back until it closes or turns out to be something else.
 */
export class CitationGuard {
  private held = '';
  private last = '';

  constructor(private readonly exists: (n: number) => boolean) {}

  push(text: string): string {
    let out = '';
    for (const ch of text) {
      if (this.held === '') {
        if (ch === '[' && !/\w/.test(this.last)) this.held = ch;
        else out += ch;
      } else {
        this.held += ch;
        if (/^\[\s*\d{1,4}(?:\s*[,;]\s*\d{1,4})*\s*\]$/.test(this.held)) {
          out += this.resolve(this.held);
          this.held = '';
        } else if (!/^\[[\d\s,;]{0,24}$/.test(this.held)) {
          out += this.held;
          this.held = '';
        }
      }
      if (out !== '') this.last = out.charAt(out.length - 1);
    }
    return out;
  }

  /** Whatever is still held back, as it was written. */
  flush(): string {
    const out = this.held;
    this.held = '';
    return out;
  }

  private resolve(marker: string): string {
    const numbers = marker.match(/\d+/g)!.map(Number);
    const kept = numbers.filter((n) => this.exists(n));
    if (kept.length === numbers.length) return marker;
    return kept.length === 0 ? '' : `[${kept.join(', ')}]`;
  }
}
