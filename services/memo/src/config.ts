import { Type, type Static } from '@sinclair/typebox';
import { loadEnv, ServiceEnv } from '@memex/runtime';

export const MemoEnv = Type.Object({
  ...ServiceEnv.properties,
  MEMO_COMMAND_CONCURRENCY: Type.Integer({ minimum: 1, maximum: 4096, default: 64, description: 'Commands handled at once' }),
});
export type MemoConfig = Static<typeof MemoEnv>;

export function loadMemoConfig(env: Record<string, string | undefined>): MemoConfig {
  return loadEnv(MemoEnv, env);
}
