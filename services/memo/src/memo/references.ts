import { MemexError } from '@memex/contracts';
import { uuidV7 } from '@memex/runtime';
import { VersionConflictError, type EventStore, type NewEvent } from '../eventStore/port';
import type { MemoReadModel } from '../readModel/port';
import { referenceStream } from './streams';

/**
 * Client reference ids are unique per project. A claim is an event on a stream named after the
 * (hashed) reference id; the expected-version append makes two racing claims conflict on every
 * backend and across memo instances. A claim whose memo never got created (its process died in
 * between) or no longer carries the reference is stale after `STALE_CLAIM_MS` and may be taken over.
 */
const STALE_CLAIM_MS = 60_000;

interface ClaimData {
  memoId: string;
}

const claimEvent = (type: 'ReferenceClaimed' | 'ReferenceReleased', memoId: string | null, now: string): NewEvent => ({
  id: uuidV7(),
  type,
  data: memoId ? { memoId } : {},
  meta: {},
  occurredAt: now,
});

export class ReferenceClaims {
  constructor(
    private readonly store: EventStore,
    private readonly readModel: MemoReadModel,
    private readonly clock: () => Date,
  ) {}

  /** Claims `referenceId` in the project for `memoId`, or throws `ReferenceIdTaken`. */
  async claim(projectId: string, referenceId: string, memoId: string): Promise<void> {
    const stream = referenceStream(projectId, referenceId);
    for (let attempt = 0; attempt < 5; attempt++) {
      const { version, events } = await this.store.readStream(stream);
      const last = events.at(-1);
      if (last?.type === 'ReferenceClaimed') {
        const holder = (last.data as ClaimData).memoId;
        if (holder === memoId) return;
        if (await this.isLiveClaim(projectId, referenceId, holder, last.occurredAt)) throw new MemexError('ReferenceIdTaken');
      }
      try {
        await this.store.appendToStream(stream, [claimEvent('ReferenceClaimed', memoId, this.clock().toISOString())], {
          expectedVersion: version,
        });
        return;
      } catch (error) {
        if (!(error instanceof VersionConflictError)) throw error;
      }
    }
    throw new MemexError('ReferenceIdTaken');
  }

  private async isLiveClaim(projectId: string, referenceId: string, holder: string, claimedAt: string): Promise<boolean> {
    const record = await this.readModel.get(holder);
    if (record) return record.projectId === projectId && record.memo.client_reference_id === referenceId;
    return this.clock().getTime() - Date.parse(claimedAt) < STALE_CLAIM_MS;
  }

  /**
   * Gives the reference up if `memoId` holds it. With `erase`, the stream keeps only a tombstone, so
   * no trace of which memo held it remains. Best effort: a leftover claim goes stale on its own.
   */
  async release(projectId: string, referenceId: string, memoId: string, { erase = false } = {}): Promise<void> {
    const stream = referenceStream(projectId, referenceId);
    const { version, events } = await this.store.readStream(stream);
    const last = events.at(-1);
    if (last?.type !== 'ReferenceClaimed' || (last.data as ClaimData).memoId !== memoId) return;
    const released = claimEvent('ReferenceReleased', null, this.clock().toISOString());
    try {
      if (erase) await this.store.eraseStream(stream, released, { expectedVersion: version });
      else await this.store.appendToStream(stream, [released], { expectedVersion: version });
    } catch (error) {
      if (!(error instanceof VersionConflictError)) throw error;
    }
  }
}
