import { describe, expect, it } from 'vitest';
import { isDuplicateKeyError, isMongoServerError, mongoDriver } from './driver';

describe('the lazily loaded MongoDB driver', () => {
  it('recognizes duplicate key errors of the server and of bulk writes, and nothing else', async () => {
    const { MongoServerError, MongoBulkWriteError, MongoNetworkError } = await mongoDriver();
    const duplicate = new MongoServerError({ message: 'E11000 duplicate key error', code: 11000 });
    const bulk = new MongoBulkWriteError({ message: 'E11000 duplicate key error', code: 11000 }, { insertedCount: 0 } as never);
    expect(isDuplicateKeyError(duplicate)).toBe(true);
    expect(isDuplicateKeyError(bulk)).toBe(true);
    expect(isMongoServerError(new MongoServerError({ message: 'unauthorized', code: 13 }))).toBe(true);
    expect(isDuplicateKeyError(new MongoServerError({ message: 'unauthorized', code: 13 }))).toBe(false);
    expect(isMongoServerError(new MongoNetworkError('connection reset'))).toBe(false);
    expect(isDuplicateKeyError(Object.assign(new Error('E11000 lookalike'), { code: 11000 }))).toBe(false);
    expect(isDuplicateKeyError({ code: 11000, name: 'MongoServerError' })).toBe(false);
    expect(isDuplicateKeyError(undefined)).toBe(false);
  });

  it('imports the driver once', async () => {
    expect(await mongoDriver()).toBe(await mongoDriver());
  });
});
