/**
 * The podman API service the container suites talk to (deploy/engine.ts `apiSocket`). It outlives
 * the run that started it (15 idle minutes), so the next run may reuse it: it must not depend on the
 * checkout that started it. A service whose working directory was a checkout removed since fails
 * every container it creates ("write child: broken pipe"), and one started with another checkout's
 * containers.conf would apply that file's settings.
 */
import { readdirSync, readFileSync, readlinkSync, realpathSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { expect, it } from 'vitest';
import { PODMAN_CONF, findEngine, podmanSocketPath } from '../../deploy/engine';
import { describeWithDocker } from './support/docker';

/** The pids whose command line names `text`. */
function processesNaming(text: string): number[] {
  return readdirSync('/proc')
    .filter((name) => /^\d+$/.test(name))
    .filter((pid) => {
      try {
        return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ').includes(text);
      } catch {
        return false;
      }
    })
    .map(Number);
}

describeWithDocker('the podman API service of the container suites', () => {
  const found = findEngine();
  const podman = !('missing' in found) && found.kind === 'podman';

  it.runIf(podman)('runs from its socket\'s directory, on a socket of its own per containers.conf', () => {
    const socket = (process.env.DOCKER_HOST ?? '').replace(/^unix:\/\//, '');
    expect(socket).toBe(podmanSocketPath({ ...process.env, CONTAINERS_CONF: process.env.CONTAINERS_CONF ?? PODMAN_CONF }));
    const pids = processesNaming(`system service --time=900 unix://${socket}`);
    expect(pids.length, `a podman system service on ${socket}`).toBeGreaterThan(0);
    for (const pid of pids) expect(readlinkSync(`/proc/${pid}/cwd`)).toBe(realpathSync(dirname(socket)));
    // another checkout's settings: another service
    expect(podmanSocketPath({ ...process.env, CONTAINERS_CONF: join('/elsewhere', 'containers.conf') })).not.toBe(socket);
  });
});
