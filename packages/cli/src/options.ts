/** What the `memex` subcommands share: the usage text and the option parser. */
import { parseArgs } from 'node:util';

export const USAGE = `memex <command> [options]

Administration (talks to NATS at NATS_URL; unset: the nats-server \`pnpm start\` started for
MEMEX_DATA_DIR (default ./data), named in data/nats.url; else nats://127.0.0.1:4222):
  org create --name N [--json]                  create an organization
  org list [--json]                             list organizations
  project create --name N [--org ID] [--json]   create a project and its first API key
                                                (no --org: the "default" organization; names are
                                                unique within an organization)
  project list [--org ID] [--json]              list projects (no keys shown)
  key list --project ID [--json]                list a project's live keys by fingerprint
  key rotate --project ID [--json]              issue a new key, revoke the old ones
  key revoke --project ID                       revoke every key of a project
  token create --org ID [--json]                create an organization token
  token revoke --token T                        revoke an organization token
  reindex --model ID [--wait]                   rebuild the search index with another embedding model
  reindex --rebuild [--wait]                    replay the memo event log into the index (after losing or restoring it)
  reindex --status                              show which model the index serves, and any re-index

API (MEMEX_URL, default https://localhost:8443; MEMEX_API_KEY or --key):
  api METHOD PATH [JSON] [--key K] [--insecure] call the API, print the response body
                                                e.g. memex api POST /api/v1/memo '{"title":"t","content":"c"}'
  mcp [--key K] [--insecure]                    serve the MCP tools over stdio (for desktop assistants)
  key create --name N --scopes S,S [--filters JSON] [--expires_at ISO] [--json]
                                                a scoped key over HTTPS (MEMEX_API_KEY needs keys:admin); scopes:
                                                memos:read, memos:write, search, chat, generate, keys:admin,
                                                audit:read, events:read, webhooks:admin
  key delete --key_id ID                        revoke a key (and the tokens it minted) over HTTPS
  audit [--project ID] [--after C] [--key_id ID] [--memo_id ID] [--action A] [--follow] [--json]
                                                the audit trail as NDJSON (MEMEX_API_KEY needs audit:read)
  events [--project ID] [--after ID] [--types T,T] [--follow] [--json]
                                                print the project's event feed; --follow streams new events
                                                (MEMEX_API_KEY needs events:read)
  import [--project ID] FILE.ndjson|FOLDER [--batch_size 256] [--concurrency 4] [--resume]
         [--manifest PATH] [--wait] [--json]
                                                import memos: NDJSON (one POST /api/v1/memo body a line)
                                                through the batch route, or every file of a folder
                                                uploaded as a document; progress on stderr (--json:
                                                NDJSON progress and a summary on stdout); a manifest
                                                (default FILE.memex-import) lets --resume skip what an
                                                earlier run created; --wait until all are processed
  webhook create --url URL [--events T,T|*] [--description D] [--json]
                                                register a webhook; prints its signing secret once
                                                (webhook commands need webhooks:admin; create also events:read)
  webhook list [--json]                         list the project's webhooks
  webhook delete WEBHOOK_ID                     delete a webhook
  webhook deliveries WEBHOOK_ID [--json]        a webhook's latest delivery attempts
  resummarize [--project ID] [--fallback_only] [--wait] [--json]
                                                summarize the project's memos again through the model
                                                (owner key; --fallback_only, also --fallback-only: only
                                                the extractive fallbacks; --wait: until all are done)

Keys and tokens are printed once and stored only as hashes. Run through pnpm as \`pnpm -s memex …\`
(-s keeps pnpm's own lines out of the output, so --json output is pure JSON).`;

/** Parses `--name value` style options, failing with the usage line on anything unknown. */
export function options<T extends Record<string, { type: 'string' | 'boolean'; short?: string }>>(args: string[], spec: T) {
  return parseArgs({ args, options: spec, allowPositionals: true, strict: true });
}
