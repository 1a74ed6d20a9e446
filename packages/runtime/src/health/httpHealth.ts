import { createServer, type Server } from 'node:http';
import type { ServiceName } from '@memex/contracts';

/**
 * A plain-HTTP health endpoint for one process (memo, indexer and agent have no other port), for
 * orchestrators' probes: `/healthz` answers while the process runs, `/readyz` only when `check`
 * says this very instance can serve (unlike the NATS ping, which any instance answers).
 */
export async function startHealthServer(
  port: number,
  service: ServiceName,
  instance: string,
  check: () => Promise<{ ready: boolean; details?: Record<string, unknown> }>,
  /** `metrics`: Prometheus text for `GET /metrics` (the gateway serves it here, never on the public API port). */
  options: { metrics?: () => Promise<string> } = {},
): Promise<Server> {
  const server = createServer((req, res) => {
    const send = (status: number, body: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    if (req.url === '/healthz') return send(200, { status: 'ok', service, instance });
    if (req.url === '/readyz') {
      void check()
        .catch((error: unknown) => ({ ready: false, details: { error: String((error as Error)?.message ?? error) } }))
        .then((r) => send(r.ready ? 200 : 503, { service, instance, ...r }));
      return;
    }
    if (req.url === '/metrics' && options.metrics) {
      void options.metrics().then(
        (text) => {
          res.writeHead(200, { 'content-type': 'text/plain; version=0.0.4; charset=utf-8' });
          res.end(text);
        },
        (error: unknown) => send(503, { error: String((error as Error)?.message ?? error) }),
      );
      return;
    }
    send(404, { error: 'Not found' });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '0.0.0.0', () => resolve());
  });
  return server;
}
