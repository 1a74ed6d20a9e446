import { useCallback, useEffect, useState } from 'preact/hooks';
import { errorMessage } from './session';

export function ErrorNote({ error }: { error: unknown }) {
  if (error === undefined || error === null) return null;
  return <p class="error" role="alert">{errorMessage(error)}</p>;
}

/** Loads once per `deps` change; `reload` runs it again. Errors are kept to show, never thrown. */
export function useLoad<T>(load: () => Promise<T>, deps: unknown[]): { data: T | undefined; error: unknown; loading: boolean; reload: () => void } {
  const [state, setState] = useState<{ data: T | undefined; error: unknown; loading: boolean }>({ data: undefined, error: undefined, loading: true });
  const [tick, setTick] = useState(0);
  useEffect(() => {
    let live = true;
    setState((s) => ({ ...s, loading: true }));
    load().then(
      (data) => live && setState({ data, error: undefined, loading: false }),
      (error: unknown) => live && setState({ data: undefined, error, loading: false }),
    );
    return () => {
      live = false;
    };
  }, [...deps, tick]);
  const reload = useCallback(() => setTick((t) => t + 1), []);
  return { ...state, reload };
}

export function StatusBadge({ status }: { status: string }) {
  return <span class={`badge badge-${status}`}>{status}</span>;
}

export function when(date: string | null | undefined): string {
  return date ? new Date(date).toLocaleString() : '—';
}
