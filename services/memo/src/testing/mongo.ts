/**
 * Where the MongoDB suites get a server: `MONGODB_URL` when set; otherwise a throwaway `mongo:7`
 * container (a single-node replica set) when a Docker engine answers; otherwise the suite is
 * skipped with a test whose name says what it needs.
 */
import { spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { MongoClient, type Db } from 'mongodb';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { MONGO_CLIENT_OPTIONS } from '@memex/runtime';

export const MONGO_IMAGE = 'mongo:7';

type MongoSource = { kind: 'url'; url: string } | { kind: 'docker' } | { kind: 'none'; reason: string };

/** Whether `docker info` reaches an engine (the CLI alone is not enough). */
function dockerEngineAvailable(): boolean {
  return spawnSync('docker', ['info'], { stdio: 'ignore', timeout: 15_000 }).status === 0;
}

function mongoSource(env: Record<string, string | undefined> = process.env): MongoSource {
  const url = env.MONGODB_URL?.trim();
  if (url) return { kind: 'url', url };
  if (dockerEngineAvailable()) return { kind: 'docker' };
  return { kind: 'none', reason: 'set MONGODB_URL or run where a Docker engine is available (testcontainers)' };
}

interface MongoServer {
  client: MongoClient;
  stop(): Promise<void>;
}

async function startServer(source: Exclude<MongoSource, { kind: 'none' }>): Promise<MongoServer> {
  // The production client options, so the suites test what runs.
  const options = { ...MONGO_CLIENT_OPTIONS, serverSelectionTimeoutMS: 15_000 };
  if (source.kind === 'url') {
    const client = await new MongoClient(source.url, options).connect();
    return { client, stop: () => client.close() };
  }
  const { MongoDBContainer } = await import('@testcontainers/mongodb');
  const container = await new MongoDBContainer(MONGO_IMAGE).start();
  try {
    // The member advertises its in-container host name; talk to the mapped port directly.
    const client = await new MongoClient(container.getConnectionString(), { ...options, directConnection: true }).connect();
    return {
      client,
      stop: async () => {
        try {
          await client.close();
        } finally {
          await container.stop();
        }
      },
    };
  } catch (error) {
    await container.stop();
    throw error;
  }
}

/** Wraps a fixture factory so each fixture gets a fresh database, dropped when it is disposed. */
type WithDb = <F extends { dispose(): Promise<void> }>(fixture: (db: Db) => Promise<F>) => () => Promise<F>;

/**
 * Runs `register` (which calls a contract suite) inside a describe block that owns the server, or,
 * when no MongoDB can be had, registers one skipped test saying why and never calls `register`, so
 * the contract's setup never runs.
 */
export function describeMongo(title: string, register: (withDb: WithDb) => void, source: MongoSource = mongoSource()): void {
  if (source.kind === 'none') {
    const message = `MongoDB contract suite skipped: ${source.reason}`;
    describe(title, () => {
      it.skip(message, () => {});
    });
    // The default reporter names no skipped test; this line shows up in it.
    console.warn(`${title}: ${message}`);
    return;
  }
  describe(`${title} (${source.kind === 'url' ? 'MONGODB_URL' : `testcontainers ${MONGO_IMAGE}`})`, () => {
    let server: MongoServer | undefined;
    // Longer than the contract's hooks may take: the first run pulls the image.
    beforeAll(async () => {
      server = await startServer(source);
    }, 300_000);
    afterAll(async () => {
      await server?.stop();
    }, 60_000);

    register((fixture) => async () => {
      if (!server) throw new Error('MongoDB server did not start');
      const db = server.client.db(`memex_test_${randomUUID().replaceAll('-', '')}`);
      try {
        const f = await fixture(db);
        return {
          ...f,
          dispose: async () => {
            try {
              await f.dispose();
            } finally {
              await db.dropDatabase();
            }
          },
        };
      } catch (error) {
        await db.dropDatabase();
        throw error;
      }
    });
  });
}
