/**
 * The Memex an end-to-end suite talks to: by default a stack started here as `pnpm start` runs it
 * (test/support/processStack.ts); with MEMEX_E2E_URL, one that is already running anywhere (the
 * Compose stack, the standalone image, a staging site), reached over HTTPS only.
 *
 *   MEMEX_E2E_URL            base URL, e.g. https://localhost:8443
 *   MEMEX_E2E_CA             PEM file of the certificate to trust (a self-signed gateway's cert.pem)
 *   MEMEX_E2E_API_KEY        a project API key
 *   MEMEX_E2E_OTHER_API_KEY  a key of another project, for the isolation checks
 */
import { readFileSync } from 'node:fs';
import { Agent } from 'node:https';
import { httpsJson, type HttpsResponse } from './https';
import { startProcessStack } from './processStack';

export interface Target {
  base: string;
  key: string;
  otherKey: string;
  /** Where the target runs, for test titles and messages. */
  label: string;
  /** JSON (or `raw`) over HTTPS as `key` (pass `null` for no Authorization header). */
  api<T = unknown>(method: string, path: string, body?: unknown, key?: string | null, raw?: { bytes: Buffer; contentType: string }): Promise<HttpsResponse<T>>;
  stop(): Promise<void>;
}

export const E2E_ENV = ['MEMEX_E2E_URL', 'MEMEX_E2E_CA', 'MEMEX_E2E_API_KEY', 'MEMEX_E2E_OTHER_API_KEY'] as const;

function targetFrom(base: string, ca: Buffer | undefined, key: string, otherKey: string, label: string, stop: () => Promise<void>): Target {
  const agent = new Agent({ keepAlive: true, maxSockets: 64, ...(ca ? { ca } : {}) });
  return {
    base,
    key,
    otherKey,
    label,
    api(method, path, body, k = key, raw) {
      return httpsJson(method, `${base}${path}`, {
        agent,
        ...(k ? { key: k } : {}),
        ...(raw ? { raw } : body === undefined ? {} : { body }),
      });
    },
    async stop() {
      agent.destroy();
      await stop();
    },
  };
}

/** The running Memex named by MEMEX_E2E_*, or a stack started here with two projects. */
export async function startTarget(): Promise<Target> {
  const url = process.env.MEMEX_E2E_URL;
  if (url) {
    const missing = E2E_ENV.filter((name) => name !== 'MEMEX_E2E_CA' && !process.env[name]);
    if (missing.length > 0) throw new Error(`MEMEX_E2E_URL is set: also set ${missing.join(', ')}`);
    const caPath = process.env.MEMEX_E2E_CA;
    const ca = caPath ? readFileSync(caPath) : undefined;
    return targetFrom(url.replace(/\/$/, ''), ca, process.env.MEMEX_E2E_API_KEY!, process.env.MEMEX_E2E_OTHER_API_KEY!, url, async () => {});
  }
  const stack = await startProcessStack();
  const other = await stack.createProject('other');
  return targetFrom(stack.base, stack.ca, stack.key, other.key, 'pnpm start', async () => {
    await stack.stop();
  });
}
