import { expect } from 'vitest';
import type { FastifyInstance } from 'fastify';
import type { Memo } from '@memex/contracts';
import { eventually } from '@memex/testing';

/** Memo calls through the gateway app (`inject`) as one project's key, for integration tests. */
export function memoApi(app: FastifyInstance, key: string) {
  const headers = { authorization: `Bearer ${key}` };
  const api = {
    headers,
    async create(body: Record<string, unknown>): Promise<string> {
      const res = await app.inject({ method: 'POST', url: '/api/v1/memo', headers, payload: body });
      expect(res.statusCode, res.body).toBe(200);
      return res.json().memo_uuid as string;
    },
    async get(id: string): Promise<Memo> {
      const res = await app.inject({ method: 'GET', url: `/api/v1/memo/${id}`, headers });
      expect(res.statusCode, res.body).toBe(200);
      return res.json() as Memo;
    },
    /** Waits until the memo is processed (pending: false) and returns it. */
    processed(id: string, timeoutMs = 10_000): Promise<Memo> {
      return eventually(async () => {
        const memo = await api.get(id);
        return memo.pending ? undefined : memo;
      }, timeoutMs);
    },
  };
  return api;
}
