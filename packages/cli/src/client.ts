import { existsSync, readFileSync } from 'node:fs';
import { request } from 'node:https';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { MemexClient } from '@memex/client';

interface CliClientOptions {
  key?: string | undefined;
  insecure?: boolean | undefined;
}

/**
 * `fetch` over node:https, so the CLI can trust the gateway's self-signed certificate (Node's global
 * fetch takes no CA). Bodies stream both ways; aborting the signal closes the connection.
 */
export function httpsFetch(tls: { ca?: Buffer | undefined; insecure?: boolean | undefined }): typeof fetch {
  return ((input: string | URL, init: RequestInit = {}) =>
    new Promise<Response>((resolve, reject) => {
      const headers: Record<string, string> = {};
      new Headers(init.headers).forEach((value, name) => (headers[name] = value));
      const req = request(
        new URL(String(input)),
        {
          method: init.method ?? 'GET',
          headers,
          ...(tls.ca ? { ca: tls.ca } : {}),
          rejectUnauthorized: !tls.insecure,
          ...(init.signal ? { signal: init.signal } : {}),
        },
        (res) => {
          const out = new Headers();
          for (const [name, value] of Object.entries(res.headers)) if (value !== undefined) out.set(name, Array.isArray(value) ? value.join(', ') : value);
          const status = res.statusCode ?? 0;
          const body = status === 204 || status === 304 ? null : (Readable.toWeb(res) as ReadableStream<Uint8Array>);
          resolve(new Response(body, { status, headers: out }));
        },
      );
      req.on('error', reject);
      if (typeof init.body === 'string') req.end(init.body);
      else if (init.body instanceof FormData || init.body instanceof Blob) {
        // multipart: let the platform encode it, then send the bytes.
        const encoded = new Response(init.body);
        const type = encoded.headers.get('content-type');
        if (type) req.setHeader('content-type', type);
        void encoded.arrayBuffer().then((bytes) => req.end(Buffer.from(bytes)), reject);
      } else req.end();
    })) as typeof fetch;
}

/** The SDK client the CLI's API commands use: MEMEX_URL, MEMEX_API_KEY (or --key; may be empty for /healthz), the data dir's certificate. */
export function cliClient(options: CliClientOptions = {}, env: NodeJS.ProcessEnv = process.env): MemexClient {
  const base = new URL(env.MEMEX_URL || 'https://localhost:8443');
  if (base.protocol !== 'https:') throw new Error('MEMEX_URL must be https:// (Memex serves HTTPS only)');
  const apiKey = options.key ?? env.MEMEX_API_KEY ?? '';
  const certPath = join(env.MEMEX_DATA_DIR || './data', 'tls', 'cert.pem');
  const ca = !options.insecure && existsSync(certPath) ? readFileSync(certPath) : undefined;
  return new MemexClient({
    baseUrl: base.origin,
    apiKey,
    ...(env.MEMEX_PROJECT_ID ? { projectId: env.MEMEX_PROJECT_ID } : {}),
    fetch: httpsFetch({ ca, insecure: options.insecure }),
  });
}
