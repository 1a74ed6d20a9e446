import { Parser } from 'htmlparser2';
import { ExtractionError } from './errors';

interface XmlHandlers {
  open?(name: string, attrs: Record<string, string>): void;
  close?(name: string): void;
  text?(text: string): void;
}

/**
 * Walks an XML (or, with `html`, an HTML) document as a stream of tags, refusing one nested deeper
 * than `maxDepth` (a parser-stack bomb) instead of recursing into it.
 */
export function walkXml(source: string, handlers: XmlHandlers, { maxDepth, html = false }: { maxDepth: number; html?: boolean }): void {
  let depth = 0;
  const parser = new Parser(
    {
      onopentag(name, attrs) {
        depth++;
        if (depth > maxDepth) throw new ExtractionError('too_large', `the document nests elements deeper than ${maxDepth} levels`);
        handlers.open?.(name, attrs);
      },
      onclosetag(name) {
        depth = Math.max(0, depth - 1);
        handlers.close?.(name);
      },
      ontext(text) {
        handlers.text?.(text);
      },
    },
    { xmlMode: !html, decodeEntities: true, lowerCaseTags: html, recognizeSelfClosing: !html },
  );
  parser.write(source);
  parser.end();
}
