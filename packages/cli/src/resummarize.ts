import { cliClient } from './client';
import { options } from './options';

const POLL_MS = 500;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * `memex resummarize [--project ID] [--fallback_only] [--wait] [--json]`: queues the project's
 * summaries to be redone by the model (only the `extractive-fallback` ones with --fallback_only)
 * and prints how many; with --wait, follows the count left until it is 0. Over HTTPS, with an
 * owner key (or an organization token and --project).
 */
export async function runResummarize(args: string[]): Promise<number> {
  const { values } = options(args, {
    key: { type: 'string' },
    insecure: { type: 'boolean', short: 'k' },
    project: { type: 'string' },
    fallback_only: { type: 'boolean' },
    // The spelling; the REST field is fallback_only.
    'fallback-only': { type: 'boolean' },
    wait: { type: 'boolean' },
    json: { type: 'boolean' },
  });
  const base = cliClient(values);
  const client = values.project ? base.with({ projectId: values.project }) : base;
  const fallbackOnly = values.fallback_only === true || values['fallback-only'] === true;
  const queued = await client.resummarizeProject(fallbackOnly ? { fallback_only: true } : {});
  if (values.json) console.log(JSON.stringify(queued));
  else console.log(`queued ${queued.memos} memo${queued.memos === 1 ? '' : 's'} to summarize again${fallbackOnly ? ' (extractive fallbacks only)' : ''}`);
  if (!values.wait) return 0;
  let last = -1;
  for (;;) {
    const { pending } = await client.getResummarizeStatus();
    if (pending !== last && !values.json) console.error(`${pending} left`);
    last = pending;
    if (pending === 0) break;
    await sleep(POLL_MS);
  }
  if (!values.json) console.log('done: every queued memo was taken (memex api GET /api/v1/memo/ID/status shows its summary_source)');
  return 0;
}
