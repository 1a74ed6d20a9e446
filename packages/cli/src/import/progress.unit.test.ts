import { afterEach, describe, expect, it, vi } from 'vitest';
import { Progress, progressText, type ProgressFigures } from './progress';

const figures = (done: number, startedAt: number): ProgressFigures => ({ phase: 'import', done, total: 1000, doneThisRun: done, startedAt });

describe('import progress', () => {
  afterEach(() => vi.useRealTimers());

  it('shows the server’s Retry-After wait instead of an ETA while it lasts', () => {
    const now = 1_000_000;
    const f = figures(500, now - 10_000);
    expect(progressText(f, now)).toBe('imported 500/1000  50 memos/s  ETA 10 s');
    expect(progressText(f, now, now + 41_500)).toBe('imported 500/1000  50 memos/s  rate limited (429): retrying in 42 s');
    expect(progressText(f, now, now + 5_000, 503)).toBe('imported 500/1000  50 memos/s  server unavailable (503): retrying in 5 s');
    expect(progressText(f, now, now - 1)).toBe('imported 500/1000  50 memos/s  ETA 10 s');
    // Either side of a minute reads the same way.
    expect(progressText(f, now, now + 59_600)).toBe(progressText(f, now, now + 60_000));
    expect(progressText(f, now, now + 60_000)).toContain('retrying in 1 min 0 s');
  });

  it('goes on redrawing while the import waits, so a paused bar never looks hung, and stops when the wait ends', () => {
    vi.useFakeTimers({ now: 1_000_000 });
    const out: string[] = [];
    const progress = new Progress('bar', { write: (t: string) => out.push(t) });
    progress.update(figures(256, Date.now() - 1_000), true);
    progress.rateLimited(3_000, 429);
    expect(out.at(-1)).toContain('rate limited (429): retrying in 3 s');
    vi.advanceTimersByTime(1_000);
    expect(out.at(-1)).toContain('retrying in 2 s');
    vi.advanceTimersByTime(3_000);
    expect(out.at(-1)).toMatch(/ETA \d+ s$/);
    const drawn = out.length;
    vi.advanceTimersByTime(5_000);
    expect(out.length).toBe(drawn);
    progress.finish();
    expect(out.at(-1)).toBe('\n');
  });

  it('puts the wait in --json progress lines as retry_in_s and retry_status', () => {
    vi.useFakeTimers({ now: 1_000_000 });
    const out: string[] = [];
    const progress = new Progress('json', { write: (t: string) => out.push(t) });
    progress.update(figures(256, Date.now() - 1_000), true);
    expect(JSON.parse(out.at(-1)!)).not.toHaveProperty('retry_in_s');
    progress.rateLimited(30_000, 429);
    expect(JSON.parse(out.at(-1)!)).toMatchObject({ type: 'progress', done: 256, retry_in_s: 30, retry_status: 429 });
    progress.finish();
  });
});
