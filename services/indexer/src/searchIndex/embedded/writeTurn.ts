/**
 * The default INDEXER_WRITE_TURN_MS (its own module, so config names it without loading the index):
 * one transaction plus the reloading of what it wrote takes about this long (one row at least),
 * then the event loop is free, so a search during a large write waits for one slice, not the whole.
 */
export const WRITE_TURN_MS = 4;
