/**
 * A memo whose processing keeps failing is not left pending silently: after the retry budget the
 * event goes to the dead-letter stream, GET shows the processing error, and a content change starts
 * over. Deleting the memo purges its dead letters too.
 */
import { jetstreamManager } from '@nats-io/jetstream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Streams, Subjects } from '@memex/contracts';
import { ExtractiveProvider } from '@memex/agent/llm/extractive';
import { eventually } from '@memex/testing';
import { memoApi } from '../support/api';
import { startStack, type Stack } from '../support/stack';

class PoisonedSummaries extends ExtractiveProvider {
  attempts = 0;
  override async summarize(content: string) {
    if (content.includes('POISON')) {
      this.attempts += 1;
      throw new Error('the summarizer choked on this memo');
    }
    return super.summarize(content);
  }
}

describe('processing that keeps failing', () => {
  let stack: Stack;
  const llm = new PoisonedSummaries();
  beforeAll(async () => {
    stack = await startStack({ agent: { llm }, env: { MEMEX_RETRY_LIMIT: '3', MEMEX_RETRY_BACKOFF_MS: '50', MEMEX_RATE_LIMIT: '0' } });
  }, 60_000);
  afterAll(async () => {
    await stack?.stop();
  });

  it('shows the error on the memo after the retry budget, dead-letters the event, and recovers on a content change', async () => {
    const { key, projectId } = await stack.project();
    const api = memoApi(stack.app, key);
    const id = await api.create({ title: 'Poisoned', content: 'This memo contains POISON for the summarizer. And a second sentence.' });

    const failed = await eventually(async () => {
      const memo = await api.get(id);
      return memo.processing_error ? memo : undefined;
    }, 15_000);
    expect(failed.pending).toBe(true);
    expect(failed.processing_error).toMatchObject({ stage: 'summarizing', revision: 1, message: 'the summarizer choked on this memo' });
    expect(failed.chunks.length).toBeGreaterThan(0);
    expect(llm.attempts).toBe(3);

    const jsm = await jetstreamManager(stack.nc);
    const dlq = `memex.dlq.agent.${Subjects.memoEvents(projectId, id)}`;
    const info = await jsm.streams.info(Streams.deadLetters, { subjects_filter: dlq });
    expect(info.state.subjects?.[dlq]).toBe(1);

    const patched = await stack.app.inject({ method: 'PATCH', url: `/api/v1/memo/${id}`, headers: api.headers, payload: { content: 'Clean text now. Nothing wrong here.' } });
    expect(patched.statusCode).toBe(200);
    const recovered = await api.processed(id);
    expect(recovered.processing_error).toBeNull();
    expect(recovered.summary).toMatch(/Clean text/);

    const deleted = await stack.app.inject({ method: 'DELETE', url: `/api/v1/memo/${id}`, headers: api.headers });
    expect(deleted.statusCode).toBe(204);
    const after = await jsm.streams.info(Streams.deadLetters, { subjects_filter: dlq });
    expect(after.state.subjects?.[dlq] ?? 0).toBe(0);
  });
});
