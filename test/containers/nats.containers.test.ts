/**
 * Memex on the NATS servers it is deployed with, in containers (the other suites use the local
 * nats-server):
 * - one server of the oldest supported line (2.10) and of the deployed one (2.11) with the Compose
 *   configuration (deploy/compose/nats.conf: JetStream, `sync_interval: always`), when those
 *   images are available;
 * - one server of the image the embedded profile and the air-gapped build use (Debian's
 *   nats-server, memex.local/nats, built by `pnpm images`);
 * - a three-server cluster with routes and MEMEX_NATS_REPLICAS=3, as deploy/kubernetes runs it
 *   (the deployed image, else the Debian one): every stream and KV bucket gets three replicas, and
 *   Memex keeps working with one server down.
 */
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { jetstreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/nats-core';
import { GenericContainer, Network, Wait, type StartedNetwork, type StartedTestContainer } from 'testcontainers';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { Buckets, Streams } from '@memex/contracts';
import { connectNats } from '@memex/runtime';
import { REPO_ROOT } from '../support/paths';
import { LOCAL_NATS } from '../../deploy/images';
import { describeWithDocker, describeWithImages, imageMissing } from './support/docker';
import { memoSearchChatFlow } from './support/flow';
import { startMemexServices, type MemexServices } from './support/services';

/** The oldest NATS line Memex supports (sync_interval, and what the tests prove works). */
const NATS_MIN_IMAGE = 'nats:2.10-alpine';
/** What deploy/compose and deploy/kubernetes run. */
const NATS_DEPLOYED_IMAGE = 'nats:2.11-alpine';

const natsUrl = (c: StartedTestContainer) => `nats://${c.getHost()}:${c.getMappedPort(4222)}`;

async function monitor<T>(c: StartedTestContainer, path: string): Promise<T> {
  const response = await fetch(`http://${c.getHost()}:${c.getMappedPort(8222)}${path}`);
  return (await response.json()) as T;
}

describeWithDocker('NATS JetStream in containers', () => {
  for (const image of [NATS_MIN_IMAGE, NATS_DEPLOYED_IMAGE]) describeWithImages(`one server (${image}) with the Compose configuration`, [image], () => {
    let nats: StartedTestContainer;
    let memex: MemexServices;

    beforeAll(async () => {
      nats = await new GenericContainer(image)
        .withCopyFilesToContainer([{ source: join(REPO_ROOT, 'deploy', 'compose', 'nats.conf'), target: '/etc/nats/nats.conf' }])
        .withCommand(['--config', '/etc/nats/nats.conf'])
        .withExposedPorts(4222, 8222)
        .withWaitStrategy(Wait.forHttp('/healthz', 8222).forStatusCode(200))
        .start();
      memex = await startMemexServices({ NATS_URL: natsUrl(nats), MEMEX_NATS_REPLICAS: '1' });
    });
    afterAll(async () => {
      await memex?.stop();
      await nats?.stop();
    });

    it('accepts deploy/compose/nats.conf: JetStream on, every write synced', async () => {
      const varz = await monitor<{ version: string; jetstream?: { config?: { sync_always?: boolean; store_dir?: string } } }>(nats, '/varz');
      expect(varz.jetstream?.config?.store_dir).toBe('/data');
      // Servers that report it say so; all of them refused to start on an unknown option otherwise.
      if (varz.jetstream?.config?.sync_always !== undefined) expect(varz.jetstream.config.sync_always).toBe(true);
    });

    it('runs a memo through processing, search and chat', async () => {
      const { key } = await memex.project(`nats-${randomUUID().slice(0, 8)}`);
      await memoSearchChatFlow(memex.api, key, { expectCitation: true });
    });
  });

  describeWithImages(`one server (${LOCAL_NATS}, Debian's nats-server)`, [LOCAL_NATS], () => {
    let nats: StartedTestContainer;
    let memex: MemexServices;

    beforeAll(async () => {
      nats = await new GenericContainer(LOCAL_NATS)
        .withCommand(['--jetstream', '--store_dir=/data', '--http_port=8222'])
        .withExposedPorts(4222, 8222)
        .withWaitStrategy(Wait.forHttp('/healthz', 8222).forStatusCode(200))
        .start();
      memex = await startMemexServices({ NATS_URL: natsUrl(nats), MEMEX_NATS_REPLICAS: '1' });
    });
    afterAll(async () => {
      await memex?.stop();
      await nats?.stop();
    });

    it('runs a memo through processing, search and chat', async () => {
      const varz = await monitor<{ version: string; jetstream?: { config?: { store_dir?: string } } }>(nats, '/varz');
      // 2.9 reports the directory it made under --store_dir.
      expect(varz.jetstream?.config?.store_dir).toMatch(/^\/data(\/jetstream)?$/);
      const { key } = await memex.project(`nats-${randomUUID().slice(0, 8)}`);
      await memoSearchChatFlow(memex.api, key, { expectCitation: true });
    });
  });

  const clusterImage = imageMissing(NATS_DEPLOYED_IMAGE) === undefined ? NATS_DEPLOYED_IMAGE : LOCAL_NATS;
  describeWithImages(`three servers (${clusterImage}) with routes and MEMEX_NATS_REPLICAS=3`, [clusterImage], () => {
    let network: StartedNetwork;
    const servers: StartedTestContainer[] = [];
    let memex: MemexServices;
    let nc: NatsConnection;

    beforeAll(async () => {
      network = await new Network().start();
      const routes = [0, 1, 2].map((i) => `nats://nats-${i}:6222`).join(',');
      const settled = await Promise.allSettled(
        [0, 1, 2].map((i) =>
          new GenericContainer(clusterImage)
            .withNetwork(network)
            .withNetworkAliases(`nats-${i}`)
            .withCommand([
              '--jetstream',
              '--store_dir=/data',
              `--server_name=nats-${i}`,
              '--cluster_name=memex',
              '--cluster=nats://0.0.0.0:6222',
              `--routes=${routes}`,
              '--http_port=8222',
              // Clients outside the Docker network cannot reach the servers' internal addresses.
              '--no_advertise=true',
            ])
            .withExposedPorts(4222, 8222)
            // Healthy once the JetStream meta group has a leader, i.e. the cluster formed.
            .withWaitStrategy(Wait.forHttp('/healthz', 8222).forStatusCode(200))
            .withStartupTimeout(120_000)
            .start(),
        ),
      );
      // Keep what did start, so afterAll stops it even when another server failed.
      for (const r of settled) if (r.status === 'fulfilled') servers.push(r.value);
      const failed = settled.find((r) => r.status === 'rejected');
      if (failed) throw failed.reason;
      const url = servers.map(natsUrl).join(',');
      memex = await startMemexServices({ NATS_URL: url, MEMEX_NATS_REPLICAS: '3' });
      nc = await connectNats({ url, name: 'containers-test' });
    });
    afterAll(async () => {
      await nc?.close();
      await memex?.stop();
      for (const s of servers) await s.stop().catch(() => undefined);
      await network?.stop();
    });

    it('replicates every stream and KV bucket three times', async () => {
      const jsm = await jetstreamManager(nc);
      const replicas = new Map<string, number>();
      for await (const stream of jsm.streams.list()) replicas.set(stream.config.name, stream.config.num_replicas);
      for (const name of Object.values(Streams)) expect(replicas.get(name), name).toBe(3);
      for (const bucket of Object.values(Buckets)) expect(replicas.get(`KV_${bucket}`), bucket).toBe(3);
    });

    it('keeps storing, processing and answering with one of the three servers stopped', async () => {
      const { key } = await memex.project(`cluster-${randomUUID().slice(0, 8)}`);
      await servers.pop()!.stop();
      // A write caught in the leader elections that follow may time out (504); a client's retry with
      // the same Idempotency-Key lands it once. No 500, and nothing lost or doubled.
      await memoSearchChatFlow(memex.api, key, { expectCitation: true, processingTimeoutMs: 90_000, retryWritesForMs: 60_000 });
    });
  });
});
