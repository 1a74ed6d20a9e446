/**
 * Crash points for tests that must prove a crash at an exact step loses nothing. Named points are
 * listed in MEMEX_FAILPOINTS (comma-separated); reaching one kills the process with SIGKILL, as a
 * power cut or OOM kill would. Unset (always, outside such tests), `hit` does nothing.
 */
export type Failpoints = (name: string) => void;

export function failpoints(spec: string | undefined): Failpoints {
  const armed = new Set((spec ?? '').split(',').map((s) => s.trim()).filter(Boolean));
  if (armed.size === 0) return () => undefined;
  return (name) => {
    if (armed.has(name)) process.kill(process.pid, 'SIGKILL');
  };
}
