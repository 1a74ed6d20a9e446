import { Type, type Static } from '@sinclair/typebox';
import { loadEnv, ServiceEnv } from '@memex/runtime';
import { FeedEnv, parseFeedConfig, type FeedConfig } from './feed/config';

export const MemoEnv = Type.Object({
  ...ServiceEnv.properties,
  MEMO_COMMAND_CONCURRENCY: Type.Integer({ minimum: 1, maximum: 4096, default: 64, description: 'Commands handled at once' }),
  ...FeedEnv,
});
export type MemoConfig = Static<typeof MemoEnv> & { feed: FeedConfig };

export function loadMemoConfig(env: Record<string, string | undefined>): MemoConfig {
  const loaded = loadEnv(MemoEnv, env);
  return { ...loaded, feed: parseFeedConfig(loaded) };
}
