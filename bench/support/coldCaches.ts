/**
 * Cold CPU caches for a timed step, as under load, when other processes share them: `mb` MiB read
 * (a byte per cache line) before it, untimed. The pair benches' `--evict-mb`.
 */
export class CacheEvictor {
  private readonly bytes: Uint8Array;
  /** What the reads summed: kept where the compiler cannot see it unused, so that they are made. */
  sum = 0;

  constructor(readonly mb: number) {
    this.bytes = new Uint8Array(mb * 1024 * 1024);
  }

  evict(): void {
    let sum = this.sum;
    for (let i = 0; i < this.bytes.length; i += 64) sum += this.bytes[i]!;
    this.sum = sum;
  }
}
