/**
 * What the agent has seen of its model: errors counted by kind and operation, summaries by source,
 * and the last error, for `/readyz` and the metrics, so a degraded model shows before users notice.
 */
import type { SummarySource } from '@memex/contracts';
import type { Counter, Metrics } from '@memex/runtime';
import { describeModelError, modelErrorKind, type ModelErrorKind } from './errors';

export interface LastModelError {
  operation: string;
  kind: ModelErrorKind;
  message: string;
  at: string;
}

export class ModelHealth {
  private last: LastModelError | undefined;
  private readonly errors: Counter | undefined;
  private readonly summaries: Counter | undefined;

  constructor(
    metrics?: Metrics,
    private readonly clock: () => Date = () => new Date(),
  ) {
    this.errors = metrics?.counter('memex_model_errors_total', 'Failed model calls, by kind and operation');
    this.summaries = metrics?.counter('memex_summaries_total', 'Summaries recorded, by the source that wrote them');
  }

  /** Counts a failed model call and keeps it as the last error; returns its kind. */
  failed(operation: 'summarize' | 'chat' | 'generate' | 'query rewrite', error: unknown): ModelErrorKind {
    const kind = modelErrorKind(error);
    this.errors?.inc({ kind, operation });
    this.last = { operation, kind, message: describeModelError(error).slice(0, 300), at: this.clock().toISOString() };
    return kind;
  }

  summarized(source: SummarySource): void {
    this.summaries?.inc({ source });
  }

  /** For readiness details: the last model error, or null when there has been none. */
  get lastError(): LastModelError | null {
    return this.last ?? null;
  }
}
