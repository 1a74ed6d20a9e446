import { createServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { loadTls } from '@memex/gateway/tls';

/**
 * Serves an in-process stack's gateway app over HTTPS on a free loopback port, with the self-signed
 * certificate the gateway makes in the data dir (as `pnpm start` does), for clients that insist on
 * HTTPS (the CLI, browsers).
 */
export async function listenHttps(app: FastifyInstance, dataDir: string): Promise<{ url: string; ca: string; close(): Promise<void> }> {
  const tls = await loadTls({ dataDir });
  await app.ready();
  const server = createServer({ cert: tls.cert, key: tls.key }, (req, res) => app.routing(req, res));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `https://localhost:${port}`,
    ca: tls.cert,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
