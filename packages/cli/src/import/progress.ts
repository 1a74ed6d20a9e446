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
  // Whole seconds first, so 59.6 s and 60.2 s both read "1 min 0 s", never "60 s" then "1 min 0 s".
  const whole = Math.ceil(seconds);
  if (whole < 60) return `${whole} s`;
  const m = Math.floor(whole / 60);
  return m < 60 ? `${m} min ${whole % 60} s` : `${Math.floor(m / 60)} h ${m % 60} min`;
}

const VERB = { import: 'imported', wait: 'processed' } as const;

/**
 * The text of one report: done/total, memos/s and the time left; while the server has the import
 * wait (429 or 503 with Retry-After, until `retryAt`), that wait instead of an ETA.
 */
export function progressText(f: ProgressFigures, now = Date.now(), retryAt: number | null = null, status = 429): string {
  const why = status === 429 ? 'rate limited (429)' : `server unavailable (${status})`;
  const left = retryAt !== null && retryAt > now ? `${why}: retrying in ${duration((retryAt - now) / 1000)}` : `ETA ${duration(eta(f, now))}`;
  return `${VERB[f.phase]} ${f.done}/${f.total}  ${rate(f, now).toFixed(0)} memos/s  ${left}`;
}

export class Progress {
  private last = 0;
  private drawn = false;
  private figures: ProgressFigures | null = null;
  private retryAt: number | null = null;
  private retryStatus = 429;
  private ticker: ReturnType<typeof setInterval> | null = null;

  constructor(
    readonly mode: ProgressMode,
    private readonly out: { write(text: string): unknown } = mode === 'json' ? process.stdout : process.stderr,
  ) {}

  /** Reports unless it reported a moment ago; `force` reports anyway (the end of a phase). */
  update(f: ProgressFigures, force = false): void {
    const now = Date.now();
    this.figures = f;
    const every = this.mode === 'bar' ? BAR_EVERY_MS : this.mode === 'json' ? JSON_EVERY_MS : LINE_EVERY_MS;
    if (!force && now - this.last < every) return;
    this.last = now;
    if (this.mode === 'json') {
      const seconds = eta(f, now);
      const waiting = this.retryAt !== null && this.retryAt > now ? { retry_in_s: Math.ceil((this.retryAt - now) / 1000), retry_status: this.retryStatus } : {};
      this.out.write(`${JSON.stringify({ type: 'progress', phase: f.phase, done: f.done, total: f.total, memos_per_s: Number(rate(f, now).toFixed(1)), eta_s: seconds === null ? null : Math.ceil(seconds), ...waiting })}\n`);
    } else if (this.mode === 'lines') {
      this.out.write(`${progressText(f, now, this.retryAt, this.retryStatus)}\n`);
    } else {
      const filled = f.total === 0 ? BAR_WIDTH : Math.round((BAR_WIDTH * f.done) / f.total);
      this.out.write(`\r\x1b[2K[${'#'.repeat(filled)}${'.'.repeat(BAR_WIDTH - filled)}] ${progressText(f, now, this.retryAt, this.retryStatus)}`);
      this.drawn = true;
    }
  }

  /**
   * The server asked the import to wait `ms` (a 429 or 503 with Retry-After): until then the report
   * says so and goes on being redrawn, so a paused import never looks hung.
   */
  rateLimited(ms: number, status: number, now = Date.now()): void {
    this.retryStatus = status;
    this.retryAt = Math.max(this.retryAt ?? 0, now + ms);
    if (this.ticker === null) {
      this.ticker = setInterval(() => {
        if (this.retryAt !== null && this.retryAt <= Date.now()) this.stopTicker();
        if (this.figures) this.update(this.figures);
      }, 1_000);
      this.ticker.unref();
    }
    if (this.figures) this.update(this.figures, true);
  }

  private stopTicker(): void {
    if (this.ticker !== null) clearInterval(this.ticker);
    this.ticker = null;
    this.retryAt = null;
  }

  /** Ends the bar's line, so what follows starts on its own. */
  finish(): void {
    this.stopTicker();
    if (this.drawn) this.out.write('\n');
    this.drawn = false;
  }
}
