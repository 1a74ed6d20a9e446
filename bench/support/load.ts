import autocannon, { type Request } from 'autocannon';

export interface LoadResult {
  label: string;
  requestsPerSecond: number;
  p50: number;
  p99: number;
  non2xx: number;
  errors: number;
}

/** One request of a sequence each connection cycles through; `body` is called per request. */
export interface LoadRequest {
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
  },
): Promise<LoadResult> {
  const result = await autocannon({
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
  });
  return {
    label,
    requestsPerSecond: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    non2xx: result.non2xx,
    errors: result.errors,
  };
}

export function formatLoad(r: LoadResult): string {
  return `${r.requestsPerSecond.toFixed(0).padStart(6)} req/s   p50 ${r.p50.toFixed(1).padStart(5)} ms   p99 ${r.p99.toFixed(1).padStart(6)} ms${r.non2xx || r.errors ? `   (non-2xx ${r.non2xx}, errors ${r.errors})` : ''}`;
}
