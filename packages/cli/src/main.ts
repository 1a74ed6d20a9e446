#!/usr/bin/env node
/**
 * `memex`: administers organizations, projects, keys and tokens (directly in NATS KV), re-indexes,
 * and drives the HTTP API. Run `memex help` for the commands.
 */
import { runAccess } from './access';
import { runAdmin } from './admin';
import { runApi } from './api';
import { runEvents, runWebhook } from './events';
import { runImport } from './import/command';
import { runMcp } from './mcp';
import { USAGE } from './options';
import { runReindex } from './reindex';
import { runResummarize } from './resummarize';

export async function main(argv: string[]): Promise<number> {
  const [group, action, ...rest] = argv;
  if (!group || group === 'help' || group === '--help' || group === '-h') {
    console.log(USAGE);
    return group ? 0 : 2;
  }
  try {
    if (group === 'api') return await runApi([action ?? '', ...rest].filter((a) => a !== ''));
    if (group === 'mcp') return await runMcp([action ?? '', ...rest].filter((a) => a !== ''));
    if (group === 'audit' || (group === 'key' && (action === 'create' || action === 'delete'))) return await runAccess(group, group === 'audit' ? '' : action!, group === 'audit' ? [action ?? '', ...rest].filter((a) => a !== '') : rest);
    if (group === 'events') return await runEvents([action ?? '', ...rest].filter((a) => a !== ''));
    if (group === 'webhook') return await runWebhook(action ?? '', rest);
    if (group === 'resummarize') return await runResummarize([action ?? '', ...rest].filter((a) => a !== ''));
    if (group === 'import') return await runImport([action ?? '', ...rest].filter((a) => a !== ''));
    if (group === 'reindex') return await runReindex([action ?? '', ...rest].filter((a) => a !== ''));
    return await runAdmin(group, action ?? '', rest);
  } catch (error) {
    console.error(`memex: ${(error as Error).message}`);
    return 1;
  }
}

if (import.meta.url === `file://${process.argv[1]}` || process.argv[1]?.endsWith('/cli/src/main.ts')) {
  main(process.argv.slice(2)).then(
    (code) => process.exit(code),
    (error: unknown) => {
      console.error(error);
      process.exit(1);
    },
  );
}
