/**
 * One answer written with the search tool, whichever provider streams it (Ollama's chat API or an
 * OpenAI-compatible server): the text sent so far, its citations checked as they stream, the
 * passages numbered across every search of the answer, the steps for `intermediate_steps`, and the
 * reply the tool gives the model for each call. The providers keep only their wire formats.
 */
import type { IntermediateStep } from '@memex/contracts';
import { abortReason, raceAbort } from './abort';
import { CitationGuard } from './citations';
import { SEARCH_TOOL_NAME, fencePassages } from './prompting';
import type { AnswerRequest, AnswerResult, Passage, TokenSink } from './port';

export class ToolAnswer {
  private readonly passages: Passage[];
  private readonly steps: IntermediateStep[] = [];
  private readonly numbers: Set<number>;
  private readonly byChunk: Map<string, Passage>;
  private readonly guard: CitationGuard;
  private nextNumber: number;
  private text = '';
  private roundHasText = false;
  private searches = 0;

  constructor(
    private readonly request: AnswerRequest,
    private readonly maxToolCalls: number,
    private readonly onToken: TokenSink,
    private readonly signal: AbortSignal,
  ) {
    this.passages = [...request.passages];
    this.numbers = new Set(this.passages.map((p) => p.n));
    this.byChunk = new Map(this.passages.map((p) => [p.chunkId, p]));
    this.nextNumber = Math.max(0, ...this.numbers) + 1;
    this.guard = new CitationGuard((n) => this.numbers.has(n));
  }

  /** Whether the model may still search in this answer. */
  get searchesLeft(): boolean {
    return this.searches < this.maxToolCalls;
  }

  /** Whether any text has reached the client (after that, a round cannot be asked again). */
  get started(): boolean {
    return this.text !== '';
  }

  /** A new model round: its text, after text of an earlier round, starts a paragraph of its own. */
  startRound(): void {
    this.roundHasText = false;
  }

  /** A piece of the model's text, on its way to the client through the citation guard. */
  readonly write = async (raw: string): Promise<void> => {
    if (!this.roundHasText && this.text !== '' && !/\s$/.test(this.text)) raw = `\n\n${raw}`;
    this.roundHasText = true;
    await this.emit(this.guard.push(raw));
  };

  /** The end of a round: whatever the guard held back goes out. */
  async endRound(): Promise<void> {
    await this.emit(this.guard.flush());
  }

  /**
   * Runs one tool call of the model (`query` undefined when its arguments hold none) and returns
   * the reply for the model. Only the query goes to search: anything else in the call is dropped.
   */
  async call(name: string | undefined, query: string | undefined): Promise<string> {
    if (!this.searchesLeft) return 'Not run: the search limit for this answer is reached. Answer with the passages you have.';
    this.searches += 1;
    if (name !== SEARCH_TOOL_NAME) return `There is no tool named ${JSON.stringify(name)}; the only tool is ${SEARCH_TOOL_NAME}.`;
    if (query === undefined) return `${SEARCH_TOOL_NAME} needs a non-empty "query" string.`;
    const found = await raceAbort(this.request.search(query), this.signal);
    const numbered = found.map((p) => {
      const seen = this.byChunk.get(p.chunkId);
      if (seen) return seen;
      const fresh: Passage = { ...p, n: this.nextNumber++ };
      this.passages.push(fresh);
      this.numbers.add(fresh.n);
      this.byChunk.set(fresh.chunkId, fresh);
      return fresh;
    });
    this.steps.push({
      tool: SEARCH_TOOL_NAME,
      input: { query, limit: found.length },
      results: found.map((p) => ({ memo_uuid: p.memoId, chunk_uuid: p.chunkId, distance: p.distance })),
    });
    return numbered.length > 0
      ? `Passages found for ${JSON.stringify(query)}:\n<passages>\n${fencePassages(numbered)}\n</passages>`
      : `No passages found for ${JSON.stringify(query)}.`;
  }

  result(): AnswerResult {
    return { text: this.text, steps: this.steps, passages: this.passages };
  }

  private async emit(piece: string): Promise<void> {
    if (piece === '') return;
    if (this.signal.aborted) throw abortReason(this.signal);
    this.text += piece;
    await this.onToken(piece);
  }
}
