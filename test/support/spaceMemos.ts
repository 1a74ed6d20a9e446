import { expect } from 'vitest';
import type { Filter } from '@memex/contracts';
import { filterCases, generateFilterMemos, type GeneratedMemo } from '@memex/testing';
import type { HttpsResponse } from './https';

/** An API call as the space suites make it: method, path, key, JSON body. */
export type SpaceApi = (method: string, path: string, key: string, body?: unknown) => Promise<HttpsResponse<Record<string, unknown>>>;

/** A key per non-empty filter case of the spec's: the spaces the property suites probe. */
export interface SpaceKey {
  name: string;
  filters: Filter[];
  key: string;
}

/**
 * `count` generated memos (seeded, so a failure replays), each POSTed by the owner; a reference
 * id already used is left unset, as a project allows each once. Returns the memos in order with
 * their ids.
 */
export async function postSpaceMemos(api: SpaceApi, owner: string, count: number, seed: number): Promise<{ generated: GeneratedMemo[]; ids: string[] }> {
  const used = new Set<string>();
  const generated = generateFilterMemos(count, seed).map((m) => {
    const ref = m.clientReferenceId && !used.has(m.clientReferenceId) ? m.clientReferenceId : null;
    if (ref) used.add(ref);
    return { ...m, clientReferenceId: ref };
  });
  const ids: string[] = [];
  for (const m of generated) {
    const res = await api('POST', '/api/v1/memo', owner, {
      title: m.title,
      content: `${m.title}. A note about the quarterly otter survey, kept for the record.`,
      metadata: m.metadata,
      tags: m.tags,
      ...(m.source ? { source: m.source } : {}),
      ...(m.clientReferenceId ? { reference_id: m.clientReferenceId } : {}),
    });
    expect(res.status, res.text).toBe(200);
    ids.push(res.body.memo_uuid as string);
  }
  return { generated, ids };
}

/** One key with `scopes` for each filter case over `generated` that has filters. */
export async function spaceKeys(api: SpaceApi, owner: string, generated: readonly GeneratedMemo[], scopes: readonly string[]): Promise<SpaceKey[]> {
  const keys: SpaceKey[] = [];
  for (const c of filterCases(generated).filter((c) => c.filters.length > 0)) {
    const res = await api('POST', '/api/v1/project/keys', owner, { name: c.name, scopes, filters: c.filters });
    expect(res.status, res.text).toBe(200);
    keys.push({ name: c.name, filters: c.filters, key: res.body.api_key as string });
  }
  return keys;
}
