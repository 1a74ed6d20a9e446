import { existsSync, readFileSync } from 'node:fs';
import { request } from 'node:https';
import { join } from 'node:path';
import { options } from './main';

/**
 * `memex api METHOD PATH [JSON]`: one HTTPS call to the gateway. The self-signed certificate the
 * gateway made in the data dir is trusted automatically; `--insecure` skips verification instead.
 */
export async function runApi(args: string[]): Promise<number> {
  const { values, positionals } = options(args, { key: { type: 'string' }, insecure: { type: 'boolean', short: 'k' } });
  const [method, path, body] = positionals;
  if (!method || !path) throw new Error('usage: memex api METHOD PATH [JSON]');
  const base = new URL(process.env.MEMEX_URL || 'https://localhost:8443');
  if (base.protocol !== 'https:') throw new Error('MEMEX_URL must be https:// (Memex serves HTTPS only)');
  const key = values.key ?? process.env.MEMEX_API_KEY;
  const certPath = join(process.env.MEMEX_DATA_DIR || './data', 'tls', 'cert.pem');
  const ca = !values.insecure && existsSync(certPath) ? readFileSync(certPath) : undefined;
  if (body !== undefined) JSON.parse(body);

  const { status, text } = await new Promise<{ status: number; text: string }>((resolve, reject) => {
    const req = request(
      new URL(path, base),
      {
        method: method.toUpperCase(),
        headers: {
          ...(key ? { authorization: `Bearer ${key}` } : {}),
          ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
        },
        ...(ca ? { ca } : {}),
        rejectUnauthorized: !values.insecure,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => {
          chunks.push(c);
          if (res.headers['content-type']?.includes('text/event-stream')) process.stdout.write(c);
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
      },
    );
    req.on('error', reject);
    if (body !== undefined) req.write(body);
    req.end();
  });
  if (!text.startsWith('data:') && !text.startsWith(':')) console.log(text);
  console.error(`HTTP ${status}`);
  return status >= 200 && status < 300 ? 0 : 1;
}
