/**
 * The standalone `memex` image with MEMEX_SINGLE_PROCESS=1: its supervisor runs every service in
 * one Node process (dist/all-in-one.mjs) beside nats-server, and the user's path works as with one
 * process per service: store, process, find and discuss a memo over HTTPS.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { MemexContainer, type StartedMemexContainer } from '@memex/testcontainers';
import { imageTag } from '../../deploy/images';
import { describeWithImages } from './support/docker';
import { httpsApi, memoSearchChatFlow } from './support/flow';

describeWithImages('the standalone image, every service in one process (MEMEX_SINGLE_PROCESS=1)', [imageTag('memex')], () => {
  let memex: StartedMemexContainer;

  beforeAll(async () => {
    memex = await new MemexContainer(imageTag('memex')).withEnvironment({ MEMEX_SINGLE_PROCESS: '1' }).start();
  });
  afterAll(async () => {
    await memex?.stop();
  });

  it('runs one service process beside nats-server and the supervisor', async () => {
    const listed = await memex.exec(['sh', '-c', 'for p in /proc/[0-9]*; do tr "\\0" " " < $p/cmdline; echo; done']);
    const commands = listed.stdout.split('\n').filter((l) => l.includes('/app/dist/'));
    expect(commands.filter((c) => !c.includes('extractor-child'))).toEqual([expect.stringMatching(/node .*\/app\/dist\/all-in-one\.mjs/)]);
  });

  it('store, process, find and discuss a memo over HTTPS', async () => {
    await memoSearchChatFlow(httpsApi(memex.baseUrl, memex.caCertificate), memex.apiKey, { expectCitation: true, processingTimeoutMs: 120_000 });
  });
});
