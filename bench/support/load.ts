import autocannon, { type Instance, type Request, type Result } from 'autocannon';
import { percentile } from './stats';

export interface LoadResult {
  label: string;
  requestsPerSecond: number;
  p50: number;
  p99: number;
  non2xx: number;
  errors: number;
  /** For a mixed load: latency by request kind (named by `LoadRequest.label`), in the order first given. */
  byKind?: { kind: string; count: number; p50: number; p99: number }[];
}

/** One request of a sequence each connection cycles through; `body` is called per request. */
export interface LoadRequest {
  /** What the request is, for the latency by kind of a mixed load. */
  label?: string;
  method: 'GET' | 'POST';
  path: string;
  body?: () => string;
}

/**
 * Runs autocannon (keep-alive, HTTPS accepted as is) and returns the figures the benches print.
 * With `requests`, each connection sends them in turn (a mixed load), on `url`'s origin.
 */
export async function load(
  label: string,
  options: {
    url: string;
    method?: 'GET' | 'POST';
    headers?: Record<string, string>;
    body?: string;
    requests?: LoadRequest[];
    connections?: number;
    durationS?: number;
    /** Requests per second from all connections together (none: as fast as they are answered). */
    overallRate?: number;
  },
): Promise<LoadResult> {
  // (without a callback autocannon returns its instance, an event emitter, made thenable)
  const tracker = autocannon({
    url: options.url,
    method: options.method ?? 'GET',
    headers: options.headers ?? {},
    ...(options.body !== undefined ? { body: options.body } : {}),
    ...(options.requests
      ? {
          requests: options.requests.map((r) => ({
            method: r.method,
            path: r.path,
            ...(r.body ? { setupRequest: (req: Request): Request => ({ ...req, body: r.body!() }) } : {}),
          })),
        }
      : {}),
    connections: options.connections ?? 50,
    duration: options.durationS ?? 10,
    ...(options.overallRate !== undefined ? { overallRate: options.overallRate } : {}),
  }) as unknown as Instance & PromiseLike<Result>;
  // Each connection sends the requests in turn, so its n-th response answers request n mod length.
  const kinds = options.requests?.map((r, i) => r.label ?? `${r.method} ${r.path} #${i}`) ?? [];
  const times = new Map<string, number[]>(kinds.map((k) => [k, []]));
  const answered = new WeakMap<object, number>();
  if (kinds.length > 1) {
    tracker.on('response', (client: object, _status: number, _bytes: number, ms: number) => {
      const n = answered.get(client) ?? 0;
      answered.set(client, n + 1);
      times.get(kinds[n % kinds.length]!)!.push(ms);
    });
  }
  const result = await tracker;
  return {
    label,
    requestsPerSecond: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    non2xx: result.non2xx,
    errors: result.errors,
    ...(kinds.length > 1
      ? {
          byKind: [...times].map(([kind, ms]) => ({ kind, count: ms.length, p50: percentile(ms, 50), p99: percentile(ms, 99) })),
        }
      : {}),
  };
}

export function formatLoad(r: LoadResult): string {
  return `${r.requestsPerSecond.toFixed(0).padStart(6)} req/s   p50 ${r.p50.toFixed(1).padStart(5)} ms   p99 ${r.p99.toFixed(1).padStart(6)} ms${r.non2xx || r.errors ? `   (non-2xx ${r.non2xx}, errors ${r.errors})` : ''}`;
}
