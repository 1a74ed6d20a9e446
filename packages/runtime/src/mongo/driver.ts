/**
 * The MongoDB driver, imported on first use: loading it costs a process tens of MiB and a noticeable
 * start, and only a deployment with MONGODB_URL uses it. Every Mongo adapter gets its classes here,
 * never from 'mongodb' at the top of a module (which a bundle hoists to its start, even under a
 * dynamic import of the adapter).
 */
import type * as MongoDriver from 'mongodb';

let loading: Promise<typeof MongoDriver> | undefined;

export function mongoDriver(): Promise<typeof MongoDriver> {
  loading ??= import('mongodb');
  return loading;
}

/** Majority writes and reads: what every Memex store on MongoDB connects with. */
export const MONGO_CLIENT_OPTIONS: MongoDriver.MongoClientOptions = { writeConcern: { w: 'majority' }, readConcern: { level: 'majority' } };

/** A client connected to `url` with {@link MONGO_CLIENT_OPTIONS}. */
export async function connectMongo(url: string): Promise<MongoDriver.MongoClient> {
  const { MongoClient } = await mongoDriver();
  return new MongoClient(url, MONGO_CLIENT_OPTIONS).connect();
}

/**
 * Whether `error` is a MongoDB server error (MongoServerError or a subclass such as
 * MongoBulkWriteError). Read from the class names along its prototype chain rather than by
 * `instanceof`, so it needs no loaded driver and holds for errors of any copy of the driver.
 */
export function isMongoServerError(error: unknown): error is MongoDriver.MongoServerError {
  if (!(error instanceof Error)) return false;
  for (let proto: unknown = Object.getPrototypeOf(error); proto; proto = Object.getPrototypeOf(proto)) {
    if ((proto as { constructor?: { name?: string } }).constructor?.name === 'MongoServerError') return true;
  }
  return false;
}

/** Whether `error` is MongoDB's duplicate key error (E11000). */
export function isDuplicateKeyError(error: unknown): error is MongoDriver.MongoServerError {
  return isMongoServerError(error) && error.code === 11000;
}
