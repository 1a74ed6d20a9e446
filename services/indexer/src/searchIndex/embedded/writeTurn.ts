/**
 * The embedded index's default write turn (INDEXER_WRITE_TURN_MS; in a module of its own so the
 * configuration names it without loading the index): milliseconds one transaction and the
 * reloading of what it wrote into memory take together, about (it ends after the row whose
 * writing and expected reloading pass this, and holds one row at least; a large memo's chunks go
 * in several), then the event loop is free before the next: searches that arrive during a large
 * batch or a large memo wait for one slice, not for the whole.
 * (Before rows were encoded outside the transaction, a turn was ~2 ms of encoding and writing, then
 * about as long reloading: ~4 ms, which `bench:load`'s searches beside ingestion were measured
 * with. 4 ms keeps that; a large memo's slices then carry ~2× the rows for the same commit and
 * sync. 2 ms measured no better: docs/benchmarks.md.)
 */
export const WRITE_TURN_MS = 4;
