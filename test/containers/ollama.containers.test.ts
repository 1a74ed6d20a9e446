/**
 * The agent's Ollama provider against Ollama in a container with a small tool-calling model
 * (MEMEX_TEST_OLLAMA_MODEL, default qwen2.5:0.5b, pulled on first run): the LLM contract suite of
 * services/agent/src/llm/contract.ts, and a smoke test of the provider port.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GenericContainer, Wait, type StartedTestContainer } from 'testcontainers';
import { loadAgentConfig } from '@memex/agent';
import { llmContract } from '@memex/agent/llm/contract';
import type { LlmProvider, Passage } from '@memex/agent/llm/port';
import { openLlm } from '@memex/agent/stores';
import { describeWithImages } from './support/docker';

/** What deploy/compose runs. */
const OLLAMA_IMAGE = 'ollama/ollama:0.12.10';
const MODEL = process.env.MEMEX_TEST_OLLAMA_MODEL || 'qwen2.5:0.5b';

describeWithImages(`Ollama (${OLLAMA_IMAGE}, model ${MODEL}) in a container`, [OLLAMA_IMAGE], () => {
  let ollama: StartedTestContainer;
  let host: string;
  const provider = (): Promise<LlmProvider> =>
    openLlm(loadAgentConfig({ OLLAMA_HOST: host, OLLAMA_MODEL: MODEL, OLLAMA_TIMEOUT_MS: '120000' }));

  beforeAll(async () => {
    ollama = await new GenericContainer(OLLAMA_IMAGE)
      .withExposedPorts(11434)
      .withWaitStrategy(Wait.forHttp('/api/version', 11434).forStatusCode(200))
      .start();
    host = `http://${ollama.getHost()}:${ollama.getMappedPort(11434)}`;
    const pulled = await ollama.exec(['ollama', 'pull', MODEL]);
    if (pulled.exitCode !== 0) throw new Error(`ollama pull ${MODEL} failed: ${pulled.output}`);
  });
  afterAll(async () => {
    await ollama?.stop();
  });

  describe('provider port', () => {
    it('is ready once the model is pulled', async () => {
      const llm = await provider();
      expect(await llm.readiness()).toMatchObject({ ready: true });
    });

    it('summarizes and tags, and streams an answer from the passages', async () => {
      const llm = await provider();
      const { summary, tags } = await llm.summarize('Container ships unload at the harbour cranes. Trucks carry the containers inland to the rail terminal.');
      expect(summary.trim()).not.toBe('');
      expect(tags.length).toBeLessThanOrEqual(8);
      const passages: Passage[] = [
        { n: 1, memoId: 'm1', memoTitle: 'Harbour', chunkId: 'c1', content: 'Trucks carry the containers inland to the rail terminal.', distance: 0.1 },
      ];
      const tokens: string[] = [];
      const result = await llm.answer(
        { kind: 'chat', input: 'Where do the trucks go?', history: [], passages, search: async () => [] },
        async (token) => {
          tokens.push(token);
        },
        new AbortController().signal,
      );
      expect(result.text.trim()).not.toBe('');
      expect(tokens.length).toBeGreaterThan(0);
    });
  });

  // A real model cannot be scripted: every contract case holds whatever the model says, only slower.
  llmContract('Ollama container', async () => ({ provider: await provider(), dispose: async () => undefined }), { testTimeoutMs: 600_000 });
});
