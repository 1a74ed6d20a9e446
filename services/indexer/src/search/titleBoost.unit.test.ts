import { describe, expect, it } from 'vitest';
import { boostTitles } from './titleBoost';

const hit = (memoTitle: string, distance: number) => ({ memoTitle, distance });

describe('title boost', () => {
  it('changes nothing at weight 0 or for a query without terms', () => {
    const hits = [hit('Cranes', 0.2), hit('Fog', 0.1)];
    expect(boostTitles(hits, 'fog cranes', 0)).toEqual(hits);
    expect(boostTitles(hits, 'the of', 0.15)).toEqual(hits);
  });

  it('moves a candidate whose title holds the query terms above a slightly closer one', () => {
    const out = boostTitles([hit('Harbour fog', 0.30), hit('Gantry cranes at the harbour', 0.35)], 'gantry cranes', 0.15);
    expect(out.map((h) => h.memoTitle)).toEqual(['Gantry cranes at the harbour', 'Harbour fog']);
    // (0.65 + 0.15·1) / 1.15 and (0.70 + 0) / 1.15.
    expect(out[0]!.distance).toBeCloseTo(1 - 0.8 / 1.15, 9);
    expect(out[1]!.distance).toBeCloseTo(1 - 0.7 / 1.15, 9);
  });

  it('keeps distances in [0, 1] and the fused order among equals', () => {
    const out = boostTitles([hit('A cranes', 0), hit('B', 0.5), hit('C', 0.5), hit('D cranes', 1)], 'cranes', 0.5);
    expect(out.map((h) => h.memoTitle)).toEqual(['A cranes', 'B', 'C', 'D cranes']);
    for (const h of out) expect(h.distance >= 0 && h.distance <= 1).toBe(true);
    expect(out[0]!.distance).toBe(0);
  });
});
