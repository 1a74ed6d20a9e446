/**
 * The LLM port contract: every provider runs this suite (extractive always; Ollama against a
 * scripted peer always, and against a real server when `OLLAMA_HOST` is set). Scripted providers
 * are told what "the model" says before each call that reaches it; providers with a real model, or
 * none, ignore the script, so each assertion here must hold whatever the model says.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHAOS_MODES, type ChaosMode } from '@memex/testing';
import { modelErrorKind } from './errors';
import type { AnswerRequest, LlmProvider, Passage } from './port';

/** What a scripted model says on its next call. */
export type ScriptedReply =
  /** An answer streamed in these pieces, `delayMs` apart. */
  | { kind: 'answer'; tokens: string[]; delayMs?: number }
  /** A summary call's structured reply. */
  | { kind: 'summary'; summary: string; tags: string[] };

export interface LlmFixture {
  provider: LlmProvider;
  dispose(): Promise<void>;
  /** Scripts the next model call; absent for providers whose output cannot be scripted. */
  script?(reply: ScriptedReply): void;
}

export interface LlmContractOptions {
  /** Per-test timeout; a real model on a CPU needs far more than the default. */
  testTimeoutMs?: number;
}

const uuid = (i: number) => `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`;

export const contractPassages: Passage[] = [
  {
    n: 1,
    memoId: uuid(1),
    memoTitle: 'NATS JetStream',
    chunkId: uuid(101),
    content:
      'JetStream stores messages in streams on disk. Each stream keeps its messages until a retention limit removes them. Consumers read a stream at their own pace and acknowledge every message they handled.',
    distance: 0.2,
  },
  {
    n: 2,
    memoId: uuid(2),
    memoTitle: 'Backups',
    chunkId: uuid(102),
    content: 'Nightly backups copy the JetStream data directory to object storage. A restore is rehearsed every month so the backups stay usable.',
    distance: 0.4,
  },
];

const MEMO =
  'JetStream is the persistence layer of NATS. It stores messages in streams on disk and replays them to consumers. ' +
  'Consumers acknowledge each message, and unacknowledged messages are delivered again after a timeout. ' +
  'Streams can be replicated across three servers for durability.';

/** A chat request over `contractPassages`, with overrides: what every provider test starts from. */
export function contractRequest(overrides: Partial<AnswerRequest> = {}): AnswerRequest {
  return {
    kind: 'chat',
    input: 'How does JetStream store messages?',
    history: [],
    passages: contractPassages,
    search: async () => [],
    ...overrides,
  };
}

export function citedNumbers(text: string): number[] {
  return [...text.matchAll(/\[(\d+(?:\s*[,;]\s*\d+)*)\]/g)].flatMap((m) => m[1]!.split(/[,;]/).map((s) => Number(s.trim())));
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export function llmContract(name: string, setup: () => Promise<LlmFixture>, options: LlmContractOptions = {}): void {
  const timeout = options.testTimeoutMs;

  describe(`LLM port contract: ${name}`, () => {
    let fixture: LlmFixture;
    let provider: LlmProvider;
    const script = (reply: ScriptedReply) => fixture.script?.(reply);
    const request = contractRequest;

    beforeAll(async () => {
      fixture = await setup();
      provider = fixture.provider;
    });
    afterAll(async () => {
      await fixture?.dispose();
    });

    it('streams tokens that concatenate to the returned text', { timeout }, async () => {
      script({ kind: 'answer', tokens: ['JetStream stores ', 'messages in streams ', 'on disk [1].'] });
      const tokens: string[] = [];
      const result = await provider.answer(request(), async (t) => void tokens.push(t), new AbortController().signal);
      expect(tokens.length).toBeGreaterThan(1);
      expect(tokens.every((t) => typeof t === 'string' && t.length > 0)).toBe(true);
      expect(tokens.join('')).toBe(result.text);
      expect(result.text.trim()).not.toBe('');
    });

    it('answers from the passages, citing only passage numbers that exist', { timeout }, async () => {
      script({ kind: 'answer', tokens: ['Messages live in streams on disk [1]', ', are backed up nightly [2, 7]', ' and never vanish [9].'] });
      const result = await provider.answer(request(), async () => undefined, new AbortController().signal);
      const cited = citedNumbers(result.text);
      expect(cited.length).toBeGreaterThan(0);
      const known = new Set(result.passages.map((p) => p.n));
      for (const n of cited) expect(known.has(n), `[${n}] in ${JSON.stringify(result.text)}`).toBe(true);
      for (const p of contractPassages) expect(result.passages.some((q) => q.chunkId === p.chunkId && q.n === p.n)).toBe(true);
    });

    it('writes a generated document citing only passage numbers that exist', { timeout }, async () => {
      script({
        kind: 'answer',
        tokens: ['# JetStream Storage\n\n', '## Streams\n\n', 'JetStream keeps messages in streams on disk [1][3].\n\n', '## Sources\n\n', '[1] NATS JetStream\n'],
      });
      const tokens: string[] = [];
      const result = await provider.answer(
        request({ kind: 'generate', input: 'Write a short document about how JetStream stores messages', rules: 'Use headings.' }),
        async (t) => void tokens.push(t),
        new AbortController().signal,
      );
      expect(tokens.join('')).toBe(result.text);
      expect(result.text.trim()).not.toBe('');
      const cited = citedNumbers(result.text);
      expect(cited.length).toBeGreaterThan(0);
      for (const n of cited) expect([1, 2]).toContain(n);
    });

    it('cites nothing when no passage was found', { timeout }, async () => {
      script({ kind: 'answer', tokens: ['The knowledge base has nothing ', 'on this [1].'] });
      const result = await provider.answer(
        request({ input: 'What is the capital of Mongolia?', passages: [] }),
        async () => undefined,
        new AbortController().signal,
      );
      expect(result.text.trim()).not.toBe('');
      expect(citedNumbers(result.text)).toEqual([]);
    });

    it('rejects at once with the abort reason when the signal is already aborted', { timeout }, async () => {
      const controller = new AbortController();
      const reason = new Error('client went away');
      controller.abort(reason);
      const tokens: string[] = [];
      await expect(provider.answer(request(), async (t) => void tokens.push(t), controller.signal)).rejects.toBe(reason);
      expect(tokens).toEqual([]);
    });

    it('stops when the signal aborts inside the token sink; no token arrives after it', { timeout }, async () => {
      script({ kind: 'answer', tokens: Array.from({ length: 40 }, (_, i) => `word${i} `), delayMs: 20 });
      const controller = new AbortController();
      const reason = new Error('client went away');
      let after = 0;
      const started = Date.now();
      let abortedAt = 0;
      const run = provider.answer(
        request(),
        async () => {
          if (controller.signal.aborted) after += 1;
          else {
            abortedAt = Date.now();
            controller.abort(reason);
          }
        },
        controller.signal,
      );
      await expect(run).rejects.toBe(reason);
      expect(abortedAt).toBeGreaterThanOrEqual(started);
      expect(Date.now() - abortedAt).toBeLessThan(1_000);
      expect(after).toBe(0);
    });

    it('stops promptly when the signal aborts while a slow reader holds a token', { timeout }, async () => {
      script({ kind: 'answer', tokens: Array.from({ length: 40 }, (_, i) => `word${i} `), delayMs: 20 });
      const controller = new AbortController();
      const reason = new Error('client went away');
      let after = 0;
      let abortedAt = 0;
      const run = provider.answer(
        request(),
        async () => {
          if (controller.signal.aborted) {
            after += 1;
            return;
          }
          setTimeout(() => {
            abortedAt = Date.now();
            controller.abort(reason);
          }, 10);
          await sleep(50);
        },
        controller.signal,
      );
      await expect(run).rejects.toBe(reason);
      expect(abortedAt).toBeGreaterThan(0);
      expect(Date.now() - abortedAt).toBeLessThan(1_000);
      expect(after).toBe(0);
    });

    it('summarizes into a string and at most 8 lowercase, trimmed, distinct tags', { timeout }, async () => {
      script({
        kind: 'summary',
        summary: 'JetStream persists NATS messages in streams on disk. Consumers acknowledge what they handled.',
        tags: ['NATS', 'JetStream', ' jetstream ', 'Streams', 'storage', 'messaging', 'consumers', 'acks', 'durability', 'replication'],
      });
      const { summary, tags } = await provider.summarize(MEMO);
      expect(typeof summary).toBe('string');
      expect(summary.trim()).not.toBe('');
      expect(tags.length).toBeLessThanOrEqual(8);
      for (const tag of tags) {
        expect(tag).toBe(tag.trim().toLowerCase());
        expect(tag).not.toBe('');
      }
      expect(new Set(tags).size).toBe(tags.length);
    });

    it('reports ready', { timeout }, async () => {
      const r = await provider.readiness();
      expect(r.ready, JSON.stringify(r.details)).toBe(true);
      expect(r.details).toBeTypeOf('object');
    });
  });
}

/** A provider in front of a peer that misbehaves on demand (the chaos peers' modes). */
export interface ChaosFixture {
  provider: LlmProvider;
  chaos(mode: ChaosMode): void;
  dispose(): Promise<void>;
}

/** What each mode must give: a summary from this source, or a model failure the processor falls back on. */
const CHAOS_SUMMARIES: Record<ChaosMode, 'model' | 'model-text' | 'fails'> = {
  prose: 'model-text',
  'tools-ignored': 'model-text',
  'fenced-json': 'model',
  'invalid-json': 'model-text',
  'slow-first-token': 'model-text',
  empty: 'fails',
  'server-error': 'fails',
  'rate-limited': 'fails',
  'cut-mid-stream': 'fails',
  endless: 'fails',
};

/**
 * Every adapter through every chaos mode: summaries are read or fail as a model failure (never
 * as a fault of ours, which would dead-letter the memo); answers stream the model's text, fail
 * as a model failure, or, endless, stop when the caller aborts.
 */
export function llmChaosContract(name: string, setup: () => Promise<ChaosFixture>): void {
  describe(`LLM port chaos contract: ${name}`, () => {
    let fixture: ChaosFixture;
    beforeAll(async () => {
      fixture = await setup();
    });
    afterAll(async () => {
      await fixture?.dispose();
    });

    for (const mode of CHAOS_MODES) {
      it(`${mode}: a summary is read, or fails as the model's failure`, { timeout: 15_000 }, async () => {
        fixture.chaos(mode);
        const expected = CHAOS_SUMMARIES[mode];
        const outcome = await fixture.provider.summarize(MEMO, AbortSignal.timeout(4_000)).then(
          (summary) => ({ summary }),
          (error: unknown) => ({ error }),
        );
        if (expected === 'fails') {
          expect('error' in outcome, JSON.stringify(outcome)).toBe(true);
          expect(modelErrorKind((outcome as { error: unknown }).error)).not.toBe('other');
        } else {
          expect(outcome).toMatchObject({ summary: { source: expected } });
          expect((outcome as { summary: { summary: string } }).summary.summary.length).toBeGreaterThan(0);
        }
      });

      it(`${mode}: an answer streams, fails as the model's failure, or stops when aborted`, { timeout: 15_000 }, async () => {
        fixture.chaos(mode);
        const controller = new AbortController();
        const stopped = new Error('the caller stopped reading');
        const tokens: string[] = [];
        const onToken = async (t: string) => {
          tokens.push(t);
          if (tokens.length >= 30) controller.abort(stopped);
        };
        const outcome = await fixture.provider.answer(contractRequest(), onToken, AbortSignal.any([controller.signal, AbortSignal.timeout(4_000)])).then(
          (result) => ({ result }),
          (error: unknown) => ({ error }),
        );
        if ('result' in outcome) {
          expect(outcome.result.text).toBe(tokens.join(''));
          if (['prose', 'tools-ignored', 'fenced-json', 'invalid-json', 'slow-first-token'].includes(mode)) expect(outcome.result.text).toMatch(/^This text is mostly about/);
          else expect(mode).toBe('empty');
        } else if (mode === 'endless') {
          expect(outcome.error).toBe(stopped);
          expect(tokens).toHaveLength(30);
        } else {
          expect(['server-error', 'rate-limited', 'cut-mid-stream']).toContain(mode);
          expect(modelErrorKind(outcome.error)).not.toBe('other');
        }
      });
    }
  });
}
