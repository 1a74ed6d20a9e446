/** How the import reports as it goes: a bar on a terminal, plain lines otherwise, NDJSON with --json. */
export type ProgressMode = 'bar' | 'lines' | 'json';

export interface ProgressFigures {
  phase: 'import' | 'wait';
  done: number;
  total: number;
  /** Items done by this run (the rate counts only these). */
  doneThisRun: number;
  startedAt: number;
}

const BAR_WIDTH = 28;
/** Plain lines and JSON progress at most this often; the bar redraws more often. */
const LINE_EVERY_MS = 5_000;
const JSON_EVERY_MS = 1_000;
const BAR_EVERY_MS = 200;

function rate(f: ProgressFigures, now: number): number {
  const seconds = (now - f.startedAt) / 1000;
  return seconds > 0 ? f.doneThisRun / seconds : 0;
}

function eta(f: ProgressFigures, now: number): number | null {
  const r = rate(f, now);
  return r > 0 ? (f.total - f.done) / r : null;
}

function duration(seconds: number | null): string {
  if (seconds === null || !Number.isFinite(seconds)) return '?';
  if (seconds < 60) return `${Math.ceil(seconds)} s`;
  const m = Math.floor(seconds / 60);
  return m < 60 ? `${m} min ${Math.round(seconds % 60)} s` : `${Math.floor(m / 60)} h ${m % 60} min`;
}

const VERB = { import: 'imported', wait: 'processed' } as const;

/** The text of one report: done/total, memos/s and the time left. */
export function progressText(f: ProgressFigures, now = Date.now()): string {
  return `${VERB[f.phase]} ${f.done}/${f.total}  ${rate(f, now).toFixed(0)} memos/s  ETA ${duration(eta(f, now))}`;
}

export class Progress {
  private last = 0;
  private drawn = false;

  constructor(
    readonly mode: ProgressMode,
    private readonly out: { write(text: string): unknown } = mode === 'json' ? process.stdout : process.stderr,
  ) {}

  /** Reports unless it reported a moment ago; `force` reports anyway (the end of a phase). */
  update(f: ProgressFigures, force = false): void {
    const now = Date.now();
    const every = this.mode === 'bar' ? BAR_EVERY_MS : this.mode === 'json' ? JSON_EVERY_MS : LINE_EVERY_MS;
    if (!force && now - this.last < every) return;
    this.last = now;
    if (this.mode === 'json') {
      const seconds = eta(f, now);
      this.out.write(`${JSON.stringify({ type: 'progress', phase: f.phase, done: f.done, total: f.total, memos_per_s: Number(rate(f, now).toFixed(1)), eta_s: seconds === null ? null : Math.ceil(seconds) })}\n`);
    } else if (this.mode === 'lines') {
      this.out.write(`${progressText(f, now)}\n`);
    } else {
      const filled = f.total === 0 ? BAR_WIDTH : Math.round((BAR_WIDTH * f.done) / f.total);
      this.out.write(`\r\x1b[2K[${'#'.repeat(filled)}${'.'.repeat(BAR_WIDTH - filled)}] ${progressText(f, now)}`);
      this.drawn = true;
    }
  }

  /** Ends the bar's line, so what follows starts on its own. */
  finish(): void {
    if (this.drawn) this.out.write('\n');
    this.drawn = false;
  }
}
