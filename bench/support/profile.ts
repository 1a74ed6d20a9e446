/**
 * Summarizes V8 CPU profiles (`--cpu-prof`) of the stack's processes: per process, the sampled CPU
 * time, and the functions with the most self and inclusive time.
 *
 *   tsx bench/support/profile.ts <dir> [--top 25] [--match <text>] [--last <seconds>]
 *
 * `--match` lists only functions whose name or file contains the text (inclusive time counts a
 * function once per sample, however deep it recurses); `--stacks <text>` prints the heaviest call
 * paths that lead to a function whose label contains the text. `--last` counts only the samples of
 * each profile's last seconds (a load run just before the stack stopped, without its start).
 */
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { profileSamples, profileTree, readCpuProfile, type ProfileNode } from './cpuProfile';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { top: { type: 'string', default: '25' }, match: { type: 'string' }, stacks: { type: 'string' }, last: { type: 'string' } },
});
const dir = positionals[0];
if (!dir) throw new Error('usage: tsx bench/support/profile.ts <dir> [--top N] [--match text] [--stacks text] [--last seconds]');
const TOP = Number(values.top);

const label = (frame: ProfileNode['callFrame']) => {
  const file = frame.url ? path.basename(frame.url.replace(/^file:\/\//, '')) : '';
  return `${frame.functionName || '(anonymous)'} ${file}${file ? `:${frame.lineNumber + 1}` : ''}`;
};

for (const file of readdirSync(dir).filter((f) => f.endsWith('.cpuprofile')).sort()) {
  const profile = readCpuProfile(path.join(dir, file));
  const { byId, parent } = profileTree(profile);
  const urls = new Set(profile.nodes.map((n) => n.callFrame.url));
  const service = [...urls].map((u) => /\/(memo|indexer|agent|gateway|extractor)(\.mjs|\/src\/main\.ts)$/.exec(u)?.[1]).find(Boolean) ?? 'other';

  const self = new Map<string, number>();
  const inclusive = new Map<string, number>();
  const paths = new Map<string, number>();
  let total = 0;
  let idle = 0;
  const span = profile.endTime - profile.startTime;
  const from = values.last === undefined ? -Infinity : span - Number(values.last) * 1e6;
  for (const { node, us, at } of profileSamples(profile, byId)) {
    if (at < from) continue;
    const name = node.callFrame.functionName;
    if (name === '(idle)') {
      idle += us;
      continue;
    }
    total += us;
    self.set(label(node.callFrame), (self.get(label(node.callFrame)) ?? 0) + us);
    const seen = new Set<string>();
    const chain: string[] = [];
    for (let id: number | undefined = node.id; id !== undefined; id = parent.get(id)) {
      const l = label(byId.get(id)!.callFrame);
      chain.push(l);
      if (seen.has(l)) continue;
      seen.add(l);
      inclusive.set(l, (inclusive.get(l) ?? 0) + us);
    }
    if (values.stacks) {
      const at = chain.findIndex((l) => l.includes(values.stacks!));
      if (at >= 0) {
        const key = chain.slice(at, at + Number(process.env.PROFILE_DEPTH ?? 12)).join(' < ');
        paths.set(key, (paths.get(key) ?? 0) + us);
      }
    }
  }
  const wall = (span - Math.max(0, from)) / 1e6;
  console.log(`\n== ${service} (${file}): ${(total / 1e6).toFixed(1)} s CPU sampled of ${wall.toFixed(1)} s wall, idle ${(idle / 1e6).toFixed(1)} s`);
  const match = values.match?.toLowerCase();
  const show = (title: string, m: Map<string, number>) => {
    console.log(`  -- ${title}`);
    const rows = [...m].filter(([l]) => !match || l.toLowerCase().includes(match)).sort((a, b) => b[1] - a[1]).slice(0, TOP);
    for (const [l, us] of rows) console.log(`  ${(us / 1e6).toFixed(2).padStart(7)} s ${((100 * us) / total).toFixed(1).padStart(5)}%  ${l}`);
  };
  show('self', self);
  show('inclusive', inclusive);
  if (values.stacks) {
    console.log(`  -- paths to ${values.stacks}`);
    for (const [key, us] of [...paths].sort((a, b) => b[1] - a[1]).slice(0, 8)) console.log(`  ${(us / 1e6).toFixed(2).padStart(7)} s  ${key}`);
  }
}
