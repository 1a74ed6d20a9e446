/**
 * The stack over HTTPS as the access tests meet it: a project, its owner key, memos of two end
 * users told apart by `metadata.user_id`, and helpers to call the API and make keys.
 */
import { Agent } from 'node:https';
import { httpsJson, type HttpsResponse } from './https';
import { listenHttps } from './httpsListener';
import { startStack, type Stack, type StackOptions } from './stack';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type Json = Record<string, any>;

/** The space of one end user: `metadata.user_id eq id`. */
export const user = (id: string) => ({ field: 'user_id', operator: 'eq', value: id, filter_type: 'custom_metadata' as const });

export interface SeedMemo {
  /** The test's own name for the memo (the key of `memos`). */
  name: string;
  user: string;
  title: string;
  content: string;
  reference_id?: string;
}

export interface AccessStack {
  stack: Stack;
  /** https://localhost:<port> */
  url: string;
  ca: string;
  agent: Agent;
  projectId: string;
  /** The project's owner key: every scope, the whole project. */
  owner: string;
  /** The seeded memos' uuids by name. */
  memos: Record<string, string>;
  api(method: string, path: string, key: string | null, body?: unknown, headers?: Record<string, string>): Promise<HttpsResponse<Json>>;
  /** POST /api/v1/project/keys as `key`; throws unless it answers 200. */
  createKey(key: string, body: Json): Promise<Json>;
  stop(): Promise<void>;
}

export async function startAccessStack(options: StackOptions & { project: string; memos: SeedMemo[] }): Promise<AccessStack> {
  const stack = await startStack({ ...options, env: { MEMEX_RATE_LIMIT: '0', ...options.env } });
  let https: Awaited<ReturnType<typeof listenHttps>> | undefined;
  let agent: Agent | undefined;
  const stop = async () => {
    agent?.destroy();
    await https?.close();
    await stack.stop();
  };
  try {
    https = await listenHttps(stack.app, stack.dataDir);
    agent = new Agent({ keepAlive: true, maxSockets: 16, ca: https.ca });
    const { url } = https;
    const { key: owner, projectId } = await stack.project(options.project);
    const api: AccessStack['api'] = (method, path, key, body, headers) =>
      httpsJson<Json>(method, `${url}${path}`, { agent, ...(key ? { key } : {}), ...(body === undefined ? {} : { body }), ...(headers ? { headers } : {}) });
    const createKey = async (key: string, body: Json) => {
      const res = await api('POST', '/api/v1/project/keys', key, body);
      if (res.status !== 200) throw new Error(`POST /api/v1/project/keys answered ${res.status}: ${res.text}`);
      return res.body;
    };
    const memos: Record<string, string> = {};
    for (const m of options.memos) {
      const res = await api('POST', '/api/v1/memo', owner, { title: m.title, content: m.content, metadata: { user_id: m.user }, ...(m.reference_id ? { reference_id: m.reference_id } : {}) });
      if (res.status !== 200) throw new Error(`seeding ${m.name} answered ${res.status}: ${res.text}`);
      memos[m.name] = res.body.memo_uuid;
    }
    return { stack, url, ca: https.ca, agent, projectId, owner, memos, api, createKey, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}
