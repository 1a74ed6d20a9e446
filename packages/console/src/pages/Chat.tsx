import { useEffect, useRef, useState } from 'preact/hooks';
import type { Citation, MemexClient } from '@memex/client';
import { ErrorNote, useLoad, when } from '../ui';

interface Turn {
  role: 'user' | 'model';
  text: string;
  citations?: Citation[];
  error?: string;
}

/** Turns [n] markers into links to the cited memo's chunk. */
function withCitations(text: string, citations: Citation[] = []) {
  const byIndex = new Map(citations.map((c) => [c.index, c]));
  return text.split(/(\[\d+\])/).map((part) => {
    const n = /^\[(\d+)\]$/.exec(part);
    const c = n ? byIndex.get(Number(n[1])) : undefined;
    return c ? <a href={`#/memos/${c.memo_uuid}?chunk=${c.chunk_uuid}`} title={c.memo_title} class="cite">{part}</a> : part;
  });
}

export function ChatPage({ client, chatId }: { client: MemexClient; chatId?: string | undefined }) {
  const chats = useLoad(() => client.listChats({ page_size: 30 }), [client, chatId]);
  const [turns, setTurns] = useState<Turn[]>([]);
  const [current, setCurrent] = useState<string | undefined>(chatId);
  const [query, setQuery] = useState('');
  const [streaming, setStreaming] = useState(false);
  const [error, setError] = useState<unknown>();
  const stopper = useRef<AbortController | undefined>(undefined);

  useEffect(() => {
    setCurrent(chatId);
    setError(undefined);
    if (!chatId) {
      setTurns([]);
      return;
    }
    client.getChat(chatId).then(
      (chat) => setTurns(chat.messages.map((m) => ({ role: m.sent_by, text: m.content }))),
      (err: unknown) => setError(err),
    );
  }, [client, chatId]);

  const ask = async (e: Event) => {
    e.preventDefault();
    const question = query.trim();
    if (!question) return;
    setQuery('');
    setError(undefined);
    const controller = new AbortController();
    stopper.current = controller;
    setStreaming(true);
    setTurns((t) => [...t, { role: 'user', text: question }, { role: 'model', text: '' }]);
    const patch = (change: (turn: Turn) => Turn) => setTurns((t) => [...t.slice(0, -1), change(t[t.length - 1]!)]);
    try {
      for await (const event of client.chatStream({ query: question, ...(current ? { chat_id: current } : {}) }, { signal: controller.signal })) {
        if (event.type === 'token') patch((turn) => ({ ...turn, text: turn.text + event.content }));
        else if (event.type === 'citations') patch((turn) => ({ ...turn, citations: event.citations }));
        else if (event.type === 'error') patch((turn) => ({ ...turn, error: event.content }));
        else if (event.type === 'done' && event.chat_id) {
          if (!current) history.replaceState(null, '', `#/chat/${event.chat_id}`);
          setCurrent(event.chat_id);
        }
      }
    } catch (err) {
      if (controller.signal.aborted) patch((turn) => ({ ...turn, error: 'Stopped.' }));
      else setError(err);
    } finally {
      setStreaming(false);
      chats.reload();
    }
  };

  return (
    <section class="chat-layout" aria-labelledby="chat-h">
      <aside aria-label="Chats">
        <a class="button" href="#/chat">New chat</a>
        <ErrorNote error={chats.error} />
        <ul class="chat-list">
          {chats.data?.results.map((c) => (
            <li><a href={`#/chat/${c.uuid}`} aria-current={c.uuid === current ? 'page' : undefined}>{c.title}</a><small>{when(c.last_message_at)} · {c.message_count}</small></li>
          ))}
        </ul>
      </aside>
      <div class="chat-main">
        <h1 id="chat-h">Chat</h1>
        <div class="turns" aria-live="polite">
          {turns.map((t) => (
            <div class={`turn ${t.role}`}>
              <span class="who">{t.role === 'user' ? 'You' : 'Memex'}</span>
              <p>{t.role === 'model' ? withCitations(t.text, t.citations) : t.text}</p>
              {t.citations && t.citations.length > 0 && (
                <ol class="citations" aria-label="Sources">
                  {t.citations.map((c) => <li value={c.index}><a href={`#/memos/${c.memo_uuid}?chunk=${c.chunk_uuid}`}>{c.memo_title}</a></li>)}
                </ol>
              )}
              {t.error && <p class="error" role="alert">{t.error}</p>}
            </div>
          ))}
        </div>
        <ErrorNote error={error} />
        <form class="ask" onSubmit={ask}>
          <label class="grow">Ask <textarea name="query" rows={2} value={query} onInput={(e) => setQuery(e.currentTarget.value)}
            onKeyDown={(e) => { if (e.key === 'Enter' && !e.shiftKey) { e.preventDefault(); e.currentTarget.form?.requestSubmit(); } }} /></label>
          {streaming ? <button type="button" onClick={() => stopper.current?.abort()}>Stop</button> : <button type="submit">{current ? 'Continue' : 'Send'}</button>}
        </form>
      </div>
    </section>
  );
}
