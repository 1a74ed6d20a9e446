import { posix } from 'node:path';
import type { BoundedZip } from './zip';
import { walkXml } from './xml';

/** Relationship id → target path (resolved against the part's folder) of an OOXML part. */
export function relationships(zip: BoundedZip, part: string, maxDepth: number): Map<string, { target: string; type: string }> {
  const dir = posix.dirname(part);
  const relsPath = posix.join(dir, '_rels', `${posix.basename(part)}.rels`);
  const rels = new Map<string, { target: string; type: string }>();
  if (!zip.has(relsPath)) return rels;
  walkXml(
    zip.readText(relsPath),
    {
      open(name, attrs) {
        if (name !== 'Relationship' || !attrs.Id || !attrs.Target || attrs.TargetMode === 'External') return;
        const target = attrs.Target.startsWith('/') ? attrs.Target.slice(1) : posix.normalize(posix.join(dir, attrs.Target));
        rels.set(attrs.Id, { target, type: attrs.Type ?? '' });
      },
    },
    { maxDepth },
  );
  return rels;
}
