import { readFileSync } from 'node:fs';

/** The parts of a V8 `.cpuprofile` (`--cpu-prof`) the benches read. */
export interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
export interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
  startTime: number;
  endTime: number;
}

export function readCpuProfile(file: string): CpuProfile {
  return JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
}

/** A profile's nodes by id, and each node's caller: a sample's call chain is its node and their callers. */
export function profileTree(profile: CpuProfile): { byId: Map<number, ProfileNode>; parent: Map<number, number> } {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  return { byId, parent };
}

/**
 * Each sample's node, the microseconds it stands for (V8's delta to the next sample) and when it
 * was taken (microseconds from the profile's start).
 */
export function* profileSamples(profile: CpuProfile, byId: Map<number, ProfileNode>): Generator<{ node: ProfileNode; us: number; at: number }> {
  let at = 0;
  for (let i = 0; i < profile.samples.length; i++) {
    at += profile.timeDeltas[i] ?? 0;
    yield { node: byId.get(profile.samples[i]!)!, us: profile.timeDeltas[i + 1] ?? 0, at };
  }
}
