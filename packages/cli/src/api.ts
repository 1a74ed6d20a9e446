import { cliClient } from './client';
import { options } from './options';

/**
 * `memex api METHOD PATH [JSON]`: one call to the gateway through @memex/client (its key handling,
 * retries on 429/503). The self-signed certificate the gateway made in the data dir is trusted
 * automatically; `--insecure` skips verification instead. Event streams are printed as they come.
 */
export async function runApi(args: string[]): Promise<number> {
  const { values, positionals } = options(args, { key: { type: 'string' }, insecure: { type: 'boolean', short: 'k' } });
  const [method, path, body] = positionals;
  if (!method || !path) throw new Error('usage: memex api METHOD PATH [JSON]');
  const client = cliClient(values);
  const res = await client.raw(method, path, body === undefined ? {} : { body: JSON.parse(body) as unknown });
  if (res.headers.get('content-type')?.includes('text/event-stream') && res.body) {
    const reader = res.body.getReader();
    for (let next = await reader.read(); !next.done; next = await reader.read()) process.stdout.write(next.value);
  } else {
    const text = await res.text();
    console.log(text);
  }
  console.error(`HTTP ${res.status}`);
  return res.ok ? 0 : 1;
}
