/**
 * The LLM provider in spans while tracing is on (gen_ai attributes: provider, model, the streamed
 * output pieces memex_tokens_streamed_total counts as tokens). Off: the provider as it is.
 */
import { inSpan, SpanKind, tracingOn } from '@memex/runtime';
import type { AnswerRequest, AnswerResult, HistoryTurn, LlmProvider, TokenSink } from './llm/port';

export function traceLlm(llm: LlmProvider, model: string | undefined): LlmProvider {
  if (!tracingOn()) return llm;
  const attributes = (operation: string) => ({ 'gen_ai.operation.name': operation, 'gen_ai.provider.name': llm.name, ...(model ? { 'gen_ai.request.model': model } : {}) });
  const traced: LlmProvider = {
    name: llm.name,
    summarize: (content: string, signal?: AbortSignal) =>
      inSpan(`summarize ${model ?? llm.name}`, { kind: SpanKind.CLIENT, attributes: { ...attributes('text_completion'), 'memex.llm.input_chars': content.length } }, () => llm.summarize(content, signal)),
    answer: (request: AnswerRequest, onToken: TokenSink, signal: AbortSignal): Promise<AnswerResult> =>
      inSpan(`chat ${model ?? llm.name}`, { kind: SpanKind.CLIENT, attributes: { ...attributes('chat'), 'memex.llm.passages': request.passages.length } }, async (span) => {
        let tokens = 0;
        const result = await llm.answer(
          request,
          (text) => {
            tokens += 1;
            return onToken(text);
          },
          signal,
        );
        span?.setAttribute('gen_ai.usage.output_tokens', tokens);
        return result;
      }),
    readiness: () => llm.readiness(),
  };
  if (llm.rewriteQuery) {
    const rewrite = llm.rewriteQuery.bind(llm);
    traced.rewriteQuery = (input: string, history: HistoryTurn[], signal: AbortSignal) =>
      inSpan(`rewrite ${model ?? llm.name}`, { kind: SpanKind.CLIENT, attributes: attributes('chat') }, () => rewrite(input, history, signal));
  }
  return traced;
}
