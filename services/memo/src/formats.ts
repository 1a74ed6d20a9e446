/**
 * The forms this memo instance writes, decided here alone from MEMEX_SEAL_DEFLATE. By default the
 * compact ones; with false, the forms the version before reads, while its instances still share
 * the stores and the bus (a rolling upgrade). Either way every form is read: each concern's reader
 * upcasts what it finds to the current shape, in one place per concern.
 *
 * | concern | compact form | the other | read by |
 * |---|---|---|---|
 * | sealed boxes | deflated first when smaller (format 2) | plain (format 1) | runtime `Keyring.open` |
 * | SQLite event rows | lean (packed ids, sealed data as bytes) | whole (JSON text) | `eventStore/sqliteRows` `fromRow` |
 * | sealed rows' snapshot | left out, folded back on the way out | sealed in with each row | `eventStore/sealed` |
 * | SQLite read-model documents | lean, deflated | JSON text | `readModel/sqliteDocs` `readDoc`, `wholeDoc` |
 * | memo events on the bus | raw sealed box after a lean envelope | JSON, box as base64 | runtime `decodeMemoEvent` |
 * | summary tags | inside `MemoSummarized` | a `MemoTagged` of their own | the decider's `evolve` |
 */
import type { MemoConfig } from './config';

export interface MemoWriteForms {
  /** SQLite event rows and read-model documents (`SqliteEventStore`, `SqliteMemoReadModel` `compact`). */
  compactRows: boolean;
  /** Sealed rows without their attribute snapshot (`SealedEventStore`'s `olderRows` is its negation). */
  leanSealedRows: boolean;
  /** Memo events on the bus with the raw sealed box (`OutboxPublisher` `compact`). */
  rawBusEvents: boolean;
  /** Summary tags in `MemoSummarized`, stored memos lean (`MemoCommandService` `compact`). */
  compactEvents: boolean;
}

export function memoWriteForms(config: Pick<MemoConfig, 'MEMEX_SEAL_DEFLATE'>): MemoWriteForms {
  const compact = config.MEMEX_SEAL_DEFLATE;
  return { compactRows: compact, leanSealedRows: compact, rawBusEvents: compact, compactEvents: compact };
}
