/**
 * The embedder port contract: the local transformers.js model and the remote adapters (against a
 * scripted peer, or a real server when configured) all pass it. Assertions hold for any model that
 * puts related texts closer than unrelated ones.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Embedder } from './port';

interface EmbedderFixture {
  embedder: Embedder;
  /** Texts per request/inference call the adapter was configured with. */
  batchSize: number;
  dispose(): Promise<void>;
}

const cosine = (a: Float32Array, b: Float32Array) => a.reduce((s, x, i) => s + x * b[i]!, 0);
const norm = (v: Float32Array) => Math.hypot(...v);

export function embedderContract(name: string, setup: () => Promise<EmbedderFixture>): void {
  describe(`Embedder port contract: ${name}`, () => {
    let fixture: EmbedderFixture;
    let embedder: Embedder;
    beforeAll(async () => {
      fixture = await setup();
      embedder = fixture.embedder;
    });
    afterAll(async () => {
      await fixture?.dispose();
    });

    it('names its model and knows its dimension', () => {
      expect(embedder.modelId).toBeTypeOf('string');
      expect(embedder.modelId).not.toBe('');
      expect(Number.isInteger(embedder.dimension) && embedder.dimension > 0).toBe(true);
    });

    it('gives one unit vector of the model dimension per text, in input order, deterministically', async () => {
      const texts = ['the stock market fell sharply', 'the cat sat on the mat', 'a pilot flew the plane'];
      const first = await embedder.embed(texts, 'document');
      const again = await embedder.embed([...texts].reverse(), 'document');
      expect(first).toHaveLength(3);
      for (const v of first) {
        expect(v).toBeInstanceOf(Float32Array);
        expect(v.length).toBe(embedder.dimension);
        expect(norm(v)).toBeCloseTo(1, 4);
      }
      again.reverse().forEach((v, i) => expect(cosine(v, first[i]!)).toBeCloseTo(1, 5));
    });

    it('puts a text closer to a related text than to an unrelated one', async () => {
      const [query] = await embedder.embed(['stock market shares'], 'query');
      const [related, unrelated] = await embedder.embed(['the stock market fell and shares lost value', 'the cat sat on the mat'], 'document');
      expect(cosine(query!, related!)).toBeGreaterThan(cosine(query!, unrelated!));
    });

    it('embeds more texts than one batch holds, keeping the order', async () => {
      const texts = Array.from({ length: fixture.batchSize * 2 + 3 }, (_, i) => (i % 2 ? `the cat sat ${i}` : `the stock market fell ${i}`));
      const vectors = await embedder.embed(texts, 'document');
      expect(vectors).toHaveLength(texts.length);
      const [cat] = await embedder.embed([texts[1]!], 'document');
      expect(cosine(vectors[1]!, cat!)).toBeCloseTo(1, 5);
    });

    it('gives an empty list for no text, and a finite vector for blank text', async () => {
      expect(await embedder.embed([], 'query')).toEqual([]);
      const [blank] = await embedder.embed([''], 'document');
      expect(blank!.length).toBe(embedder.dimension);
      expect([...blank!].every(Number.isFinite)).toBe(true);
    });

    it('refuses an unknown kind', async () => {
      await expect(embedder.embed(['x'], 'passage' as 'query')).rejects.toThrow(/kind/);
    });
  });
}
