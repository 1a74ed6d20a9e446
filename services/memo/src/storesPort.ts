import type { EventStore } from './eventStore/port';
import type { MemoReadModel } from './readModel/port';

/** The memo service's two stores on one backend, as stores.ts opens them (SQLite or MongoDB). */
export interface MemoStores {
  store: EventStore;
  readModel: MemoReadModel;
  /** After an erasure: makes sure no page of the erased rows survives in a log file (SQLite: WAL checkpoint). */
  afterErase(): Promise<void>;
  close(): Promise<void>;
}
