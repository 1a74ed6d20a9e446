import { describe, expect, it } from 'vitest';
import { availableParallelism } from 'node:os';
import { describeCpuLimits, effectiveCores, parseCpuList, readCpuLimits, readQuotaUsageMs, type ReadText } from './cpuLimits';

/** A file system of the given files; any other path fails as a missing file does. */
function files(contents: Record<string, string>): ReadText {
  return (path) => {
    const text = contents[path];
    if (text === undefined) throw Object.assign(new Error(`ENOENT: ${path}`), { code: 'ENOENT' });
    return text;
  };
}

const STATUS = (cpus: string) => `Name:\tnode\nCpus_allowed:\tff\nCpus_allowed_list:\t${cpus}\nMems_allowed_list:\t0\n`;

/** cgroup v2 only, in a container with its own cgroup namespace: its cgroup shows as `/`. */
const V2_CONTAINER = {
  '/proc/self/status': STATUS('0-7'),
  '/proc/self/cgroup': '0::/\n',
  '/proc/self/mountinfo': [
    '300 290 0:60 / / rw,relatime - overlay overlay rw',
    '310 300 0:27 / /sys/fs/cgroup ro,nosuid,nodev,noexec,relatime - cgroup2 cgroup rw,nsdelegate',
  ].join('\n'),
  '/sys/fs/cgroup/cpu.max': '150000 100000\n',
  '/sys/fs/cgroup/cpu.stat': 'usage_usec 2500000\nuser_usec 2000000\nsystem_usec 500000\n',
};

/**
 * A hybrid host (cgroup v1 controllers, an empty v2 hierarchy beside them) running a podman container
 * (`--cpus 0.5 --cpuset-cpus 1,3`) in the host's cgroup namespace, as podman showed one here: the
 * paths in /proc/self/cgroup are the host's, and each controller's mount shows the container's own
 * cgroup at its top.
 */
const POD = '/libpod_parent/libpod-960ffdc6bdfa';
const V1_HYBRID = {
  '/proc/self/status': STATUS('1,3'),
  '/proc/self/cgroup': [`3:cpuset:${POD}`, `2:cpuacct:${POD}`, `1:cpu:${POD}`, `0::${POD}`].join('\n'),
  '/proc/self/mountinfo': [
    '97 89 0:46 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime - tmpfs tmpfs rw,mode=755',
    `98 97 0:28 ${POD} /sys/fs/cgroup/cpu ro,nosuid,nodev,noexec,relatime - cgroup cgroup rw,cpu`,
    `99 97 0:29 ${POD} /sys/fs/cgroup/cpuacct ro,nosuid,nodev,noexec,relatime - cgroup cgroup rw,cpuacct`,
    `100 97 0:30 ${POD} /sys/fs/cgroup/cpuset ro,nosuid,nodev,noexec,relatime - cgroup cgroup rw,cpuset`,
  ].join('\n'),
  '/sys/fs/cgroup/cpu/cpu.cfs_quota_us': '50000\n',
  '/sys/fs/cgroup/cpu/cpu.cfs_period_us': '100000\n',
  '/sys/fs/cgroup/cpuacct/cpuacct.usage': '7000000000\n',
};

/** cgroup v1 with `cpu` and `cpuacct` mounted together, in the host's namespace (no container). */
const V1_HOST = {
  '/proc/self/cgroup': '4:cpu,cpuacct:/system.slice/memex.service\n',
  '/proc/self/mountinfo': '40 30 0:33 / /sys/fs/cgroup/cpu,cpuacct rw,nosuid - cgroup cgroup rw,cpu,cpuacct\n',
  '/sys/fs/cgroup/cpu,cpuacct/system.slice/memex.service/cpu.cfs_quota_us': '300000\n',
  '/sys/fs/cgroup/cpu,cpuacct/system.slice/memex.service/cpu.cfs_period_us': '100000\n',
  '/sys/fs/cgroup/cpu,cpuacct/system.slice/cpu.cfs_quota_us': '-1\n',
  '/sys/fs/cgroup/cpu,cpuacct/system.slice/cpu.cfs_period_us': '100000\n',
};

describe('parseCpuList', () => {
  it('reads the ranges and single cores Linux lists', () => {
    expect(parseCpuList('0-3,8,10-11\n')).toEqual([0, 1, 2, 3, 8, 10, 11]);
    expect(parseCpuList('5')).toEqual([5]);
    expect(parseCpuList('')).toBeUndefined();
    expect(parseCpuList('0-a')).toBeUndefined();
  });
});

describe('readCpuLimits', () => {
  it('reads a cgroup v2 container: its affinity, its quota, and where its usage is counted', () => {
    const limits = readCpuLimits(files(V2_CONTAINER));
    expect(limits).toEqual({
      cpus: [0, 1, 2, 3, 4, 5, 6, 7],
      quota: { cores: 1.5, usageFile: '/sys/fs/cgroup/cpu.stat', usageKey: 'usage_usec', usageMsPerUnit: 1e-3 },
    });
    expect(readQuotaUsageMs(limits.quota!, files(V2_CONTAINER))).toBe(2500);
    expect(effectiveCores(limits)).toBe(2);
    expect(describeCpuLimits(limits)).toBe('2 cores (cpus 0-7, quota 1.5)');
  });

  it('reads a cgroup v1 container whose mounts show its cgroup at their top', () => {
    const limits = readCpuLimits(files(V1_HYBRID));
    expect(limits).toEqual({
      cpus: [1, 3],
      quota: { cores: 0.5, usageFile: '/sys/fs/cgroup/cpuacct/cpuacct.usage', usageMsPerUnit: 1e-6 },
    });
    expect(readQuotaUsageMs(limits.quota!, files(V1_HYBRID))).toBe(7000);
    expect(effectiveCores(limits)).toBe(1);
    expect(describeCpuLimits(limits)).toBe('1 core (cpus 1,3, quota 0.5)');
  });

  it('reads a cgroup v1 service whose cpu and cpuacct share a mount, under the host\'s paths', () => {
    expect(readCpuLimits(files(V1_HOST)).quota).toEqual({
      cores: 3,
      usageFile: '/sys/fs/cgroup/cpu,cpuacct/system.slice/memex.service/cpuacct.usage',
      usageMsPerUnit: 1e-6,
    });
  });

  it('takes the tightest quota of the cgroup and its ancestors (a pod\'s limit above a container)', () => {
    const read = files({
      '/proc/self/cgroup': '0::/kubepods/pod1/ctr\n',
      '/proc/self/mountinfo': '31 22 0:26 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n',
      '/sys/fs/cgroup/kubepods/pod1/ctr/cpu.max': 'max 100000\n',
      '/sys/fs/cgroup/kubepods/pod1/cpu.max': '200000 100000\n',
      '/sys/fs/cgroup/kubepods/cpu.max': '400000 100000\n',
      '/sys/fs/cgroup/kubepods/pod1/cpu.stat': 'usage_usec 10\n',
    });
    expect(readCpuLimits(read).quota).toMatchObject({ cores: 2, usageFile: '/sys/fs/cgroup/kubepods/pod1/cpu.stat' });
  });

  it('has no quota where every cpu.max says max or cfs_quota_us says -1', () => {
    expect(readCpuLimits(files({ ...V2_CONTAINER, '/sys/fs/cgroup/cpu.max': 'max 100000\n' })).quota).toBeUndefined();
    expect(readCpuLimits(files({ ...V1_HYBRID, '/sys/fs/cgroup/cpu/cpu.cfs_quota_us': '-1\n' })).quota).toBeUndefined();
  });

  it('leaves out what cannot be read, and counts the machine\'s cores then', () => {
    expect(readCpuLimits(files({}))).toEqual({});
    expect(readCpuLimits(files({ '/proc/self/status': STATUS('0-1') }))).toEqual({ cpus: [0, 1] });
    expect(effectiveCores({}, 6)).toBe(6);
    expect(describeCpuLimits({}, 6)).toBe('6 cores');
    const quota = { cores: 1, usageFile: '/nowhere', usageMsPerUnit: 1 };
    expect(readQuotaUsageMs(quota, files({}))).toBeUndefined();
    expect(readQuotaUsageMs({ ...quota, usageKey: 'usage_usec' }, files({ '/nowhere': 'user_usec 5\n' }))).toBeUndefined();
  });

  it('reads this machine, where it is Linux', () => {
    if (process.platform !== 'linux') return;
    const limits = readCpuLimits();
    expect(limits.cpus?.length).toBe(availableParallelism());
    expect(effectiveCores(limits)).toBeLessThanOrEqual(availableParallelism());
    if (limits.quota) expect(readQuotaUsageMs(limits.quota)).toBeGreaterThan(0);
  });
});
