/**
 * Checks the relative links of Markdown files as GitHub renders them: every `[text](target)`,
 * `![alt](target)` and `[label]: target` outside code must name a file or directory that exists,
 * and its `#anchor` a heading of the file it points to (GitHub's slugs, `-1`, `-2` … for repeats).
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

export interface BrokenLink {
  file: string;
  line: number;
  target: string;
  reason: string;
}

/** The text of a file with fenced code blocks blanked (line numbers kept) and inline code spans removed. */
function proseLines(markdown: string): string[] {
  let fence: string | undefined;
  return markdown.split('\n').map((line) => {
    const opening = /^\s{0,3}(`{3,}|~{3,})/.exec(line);
    if (fence !== undefined) {
      if (opening && opening[1]![0] === fence[0] && opening[1]!.length >= fence.length && line.trim() === opening[1]) fence = undefined;
      return '';
    }
    if (opening) {
      fence = opening[1];
      return '';
    }
    return line.replace(/(`+)(?:(?!\1).)+?\1/g, '');
  });
}

/** GitHub's anchor for a heading's text: lower case, punctuation dropped, spaces as hyphens. */
export function githubSlug(heading: string): string {
  const text = heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1') // links and images: their text
    .replace(/<[^>]+>/g, '') // inline HTML
    .replace(/`/g, '')
    .replace(/\*+/g, '');
  return text
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc}\- ]/gu, '')
    .replace(/ /g, '-');
}

/** Every anchor a Markdown file offers: its headings' slugs (repeats numbered) and HTML ids and names. */
export function anchorsOf(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  let fence: string | undefined;
  for (const line of markdown.split('\n')) {
    const opening = /^\s{0,3}(`{3,}|~{3,})/.exec(line);
    if (fence !== undefined) {
      if (opening && opening[1]![0] === fence[0] && line.trim() === opening[1]) fence = undefined;
      continue;
    }
    if (opening) {
      fence = opening[1];
      continue;
    }
    const heading = /^\s{0,3}#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (heading) {
      const slug = githubSlug(heading[1]!);
      const count = seen.get(slug) ?? 0;
      seen.set(slug, count + 1);
      anchors.add(count === 0 ? slug : `${slug}-${count}`);
    }
    for (const html of line.matchAll(/<a\s[^>]*(?:name|id)="([^"]+)"/g)) anchors.add(html[1]!);
  }
  return anchors;
}

/** Link targets of one line: inline links and images, and reference definitions. */
function targetsOf(line: string): string[] {
  const targets: string[] = [];
  for (const m of line.matchAll(/!?\[(?:[^\]\\]|\\.)*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) targets.push(m[1]!);
  const definition = /^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+"[^"]*")?\s*$/.exec(line);
  if (definition) targets.push(definition[1]!);
  return targets;
}

/** The broken relative links and anchors of `files` (paths relative to `root`). */
export function brokenLinks(root: string, files: string[]): BrokenLink[] {
  const broken: BrokenLink[] = [];
  const anchorCache = new Map<string, Set<string>>();
  const anchors = (path: string) => {
    let found = anchorCache.get(path);
    if (!found) anchorCache.set(path, (found = anchorsOf(readFileSync(path, 'utf8'))));
    return found;
  };
  for (const file of files) {
    const source = join(root, file);
    proseLines(readFileSync(source, 'utf8')).forEach((line, index) => {
      for (const target of targetsOf(line)) {
        if (/^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith('//')) continue; // https:, mailto: …
        const report = (reason: string) => broken.push({ file, line: index + 1, target, reason });
        const hash = target.indexOf('#');
        const pathPart = decodeURIComponent(hash === -1 ? target : target.slice(0, hash));
        const anchor = hash === -1 ? undefined : decodeURIComponent(target.slice(hash + 1));
        const resolved = pathPart === '' ? source : resolve(dirname(source), pathPart);
        if (!resolved.startsWith(resolve(root))) {
          report('points outside the repository');
          continue;
        }
        if (!existsSync(resolved)) {
          report(`${relative(root, resolved)} does not exist`);
          continue;
        }
        if (anchor === undefined || anchor === '') continue;
        if (!statSync(resolved).isFile() || !resolved.endsWith('.md')) {
          report(`an anchor into ${relative(root, resolved)}, which is not a Markdown file`);
          continue;
        }
        if (!anchors(resolved).has(anchor)) report(`${relative(root, resolved)} has no heading #${anchor}`);
      }
    });
  }
  return broken;
}
