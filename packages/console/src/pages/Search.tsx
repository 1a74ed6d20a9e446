import { useState } from 'preact/hooks';
import type { Filter, MemexClient, SearchBody, SearchMethod, SearchResponse } from '@memex/client';
import { ErrorNote } from '../ui';

const METHODS: SearchMethod[] = ['chunk_vector_search', 'title_contains', 'title_startswith'];

/** Marks the query's words in a chunk (case-insensitive, whole words of 3+ letters). */
function highlight(text: string, query: string) {
  const words = [...new Set(query.toLowerCase().match(/[\p{L}\p{N}]{3,}/gu) ?? [])];
  if (words.length === 0) return text;
  const pattern = new RegExp(`(${words.map((w) => w.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('|')})`, 'giu');
  return text.split(pattern).map((part, i) => (i % 2 === 1 ? <mark>{part}</mark> : part));
}

function shellQuote(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}

export function SearchPage({ client, apiKeyHint }: { client: MemexClient; apiKeyHint: string }) {
  const [query, setQuery] = useState('');
  const [method, setMethod] = useState<SearchMethod>('chunk_vector_search');
  const [limit, setLimit] = useState(10);
  const [filtersText, setFiltersText] = useState('[]');
  const [result, setResult] = useState<SearchResponse>();
  const [error, setError] = useState<unknown>();
  const [body, setBody] = useState<SearchBody>();
  const [busy, setBusy] = useState(false);
  const run = async (e: Event) => {
    e.preventDefault();
    setError(undefined);
    let filters: Filter[];
    try {
      filters = JSON.parse(filtersText || '[]') as Filter[];
      if (!Array.isArray(filters)) throw new Error('Filters must be a JSON array');
    } catch (err) {
      setError(new Error(`Filters are not valid JSON: ${(err as Error).message}`));
      return;
    }
    const next: SearchBody = { query, search_method: method, limit, ...(filters.length ? { filters } : {}) };
    setBody(next);
    setBusy(true);
    try {
      setResult(await client.search(next));
    } catch (err) {
      setResult(undefined);
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  const curl = body
    ? `curl -s -X POST ${client.url('search')} \\\n  -H "Authorization: Bearer $MEMEX_API_KEY" -H 'Content-Type: application/json' \\\n  -d ${shellQuote(JSON.stringify(body))}`
    : '';
  return (
    <section aria-labelledby="search-h">
      <h1 id="search-h">Search playground</h1>
      <form class="search-form" onSubmit={run}>
        <label class="grow">Query <input name="query" required value={query} onInput={(e) => setQuery(e.currentTarget.value)} /></label>
        <label>Method
          <select name="search_method" value={method} onChange={(e) => setMethod(e.currentTarget.value as SearchMethod)}>
            {METHODS.map((m) => <option value={m}>{m}</option>)}
          </select>
        </label>
        <label>Limit <input name="limit" type="number" min={1} max={50} value={limit} onInput={(e) => setLimit(Number(e.currentTarget.value))} /></label>
        <label class="grow">Filters (JSON array, as in the API)
          <textarea name="filters" rows={2} value={filtersText} onInput={(e) => setFiltersText(e.currentTarget.value)} />
        </label>
        <button type="submit" disabled={busy}>{busy ? 'Searching…' : 'Search'}</button>
      </form>
      <ErrorNote error={error} />
      {curl && (
        <details>
          <summary>Equivalent curl (key from $MEMEX_API_KEY, yours starts {apiKeyHint}…)</summary>
          <pre class="curl" data-testid="curl">{curl}</pre>
          <button onClick={() => void navigator.clipboard?.writeText(curl)}>Copy</button>
        </details>
      )}
      {result && (
        <ol class="results" aria-label="Results">
          {result.results.length === 0 && <li>No results.</li>}
          {result.results.map((r) => (
            <li class="result">
              <div class="row spread">
                <a href={`#/memos/${r.memo_uuid}${r.chunk_uuid ? `?chunk=${r.chunk_uuid}` : ''}`}><strong>{r.memo_title}</strong></a>
                {r.score ? (
                  <span class="score" data-testid="score">
                    score <b>{r.score.relevance.toFixed(3)}</b> = lexical {r.score.lexical.toFixed(3)} + dense {r.score.dense.toFixed(3)}
                    <meter min={0} max={1} value={r.score.relevance} aria-label="fused score" />
                  </span>
                ) : (
                  <span class="score">distance {r.distance === null ? '— (title match)' : r.distance.toFixed(3)}</span>
                )}
              </div>
              {r.chunk_content && <p class="chunk">{highlight(r.chunk_content, query)}</p>}
              {r.memo_summary && <p class="muted">{r.memo_summary}</p>}
            </li>
          ))}
        </ol>
      )}
    </section>
  );
}
