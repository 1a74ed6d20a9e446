/**
 * What authorization and the audit write cost: GET-by-id and search at c=32 through the whole
 * stack (HTTPS gateway → NATS → services, as `pnpm start` runs it), with both on against both off,
 * in one run on one machine.
 *
 * Three extra gateways of the same build join the stack: one with MEMEX_AUDIT=on, one off, and a
 * control, off as well, whose "cost" against the other off one is what two processes of one build
 * differ by: the noise floor below which no cost here can be told. They are started afresh every
 * round. Each request is sent as the owner key and as a scoped key whose space holds every memo of
 * the project; the owner's search names the space's filters in its body, so both keys send the
 * indexer the same filters and take the same path. The difference is then the scope check, the
 * space merged into the request, the memo service's space check and the audit entry. Rounds run
 * the ways in rotating order, so the machine's drift falls on all alike; the cost is taken per
 * round against that round's baseline, and min/median/max show the noise. Beside throughput, the
 * CPU time every server process spent per answered request (the load generator excluded), in all
 * and by process. With `--profile DIR` the gateways run under V8's profiler and the audit code's
 * share of an audit-on gateway's CPU is read off the profiles: the figure the noise disturbs least.
 * Last, the same work timed alone in this process: the scope check, the space merged and checked
 * against a memo, and the audit entry queued, formatted and published to the stack's NATS
 * (nats-server's CPU included).
 *
 *   tsx bench/access.bench.ts [--rounds 5] [--duration 3] [--connections 32] [--memos 200] [--profile DIR]
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import { basename, join } from 'node:path';
import type { FastifyRequest } from 'fastify';
import { jetstreamManager } from '@nats-io/jetstream';
import type { Filter, FilterableMemo } from '@memex/contracts';
import { matchesFilters } from '@memex/contracts';
import { connectNats, silentLogger, type Principal } from '@memex/runtime';
import { parseArgs } from 'node:util';
import { eventually, freePort, tempDir } from '@memex/testing';
import { bundleInPlace } from '../deploy/bundle';
import { AuditTrail } from '../services/gateway/src/auth/audit';
import { checkAccess, noteMemoIds } from '../services/gateway/src/auth/scopes';
import { httpsJson } from '../test/support/https';
import { REPO_ROOT } from '../test/support/paths';
import { exited } from '../test/support/processes';
import { startProcessStack } from '../test/support/processStack';
import { load } from './support/load';
import { profileSamples, profileTree, readCpuProfile } from './support/cpuProfile';
import { cpuBetween, cpuSnapshot } from './support/processCpu';
import { percentile, printTable } from './support/stats';

const { values } = parseArgs({
  options: {
    rounds: { type: 'string', default: '5' },
    duration: { type: 'string', default: '3' },
    connections: { type: 'string', default: '32' },
    memos: { type: 'string', default: '200' },
    /** A folder for the bench gateways' CPU profiles (`--cpu-prof`), written when they stop. */
    profile: { type: 'string' },
  },
});
const rounds = Number(values.rounds);
const durationS = Number(values.duration);
const connections = Number(values.connections);
const memoCount = Number(values.memos);

const SPACE: Filter[] = [{ field: 'user_id', operator: 'in', value: ['u1', 'u2'], filter_type: 'custom_metadata' }];
type Way = 'owner, audit off' | 'owner, audit off (control)' | 'owner, audit on' | 'scoped, audit off' | 'scoped, audit on';
/** The control is the baseline's twin on a third gateway: its "cost" is what two processes of one build differ by. */
const WAYS: Way[] = ['owner, audit off', 'scoped, audit off', 'owner, audit on', 'scoped, audit on', 'owner, audit off (control)'];
type Gateway = 'on' | 'off' | 'control';
const gatewayOf = (way: Way): Gateway => (way.endsWith('(control)') ? 'control' : way.endsWith('on') ? 'on' : 'off');

const stack = await startProcessStack({ MEMEX_RATE_LIMIT: '0', LOG_LEVEL: 'warn' });
const gateways: ChildProcess[] = [];
const build = tempDir('memex-bench-gateway-');
try {
  const call = <T>(method: string, url: string, body?: unknown, key = stack.key) => httpsJson<T>(method, url, { key, ca: stack.ca, agent: stack.agent, ...(body === undefined ? {} : { body }) });
  let target = '';
  for (let i = 0; i < memoCount; i++) {
    const user = i % 2 === 0 ? 'u1' : 'u2';
    const res = await call<{ memo_uuid: string }>('POST', `${stack.base}/api/v1/memo`, {
      title: `Field report ${i}`,
      content: `Report ${i} for ${user}: the otter survey counted ${i % 17} animals near the river bend, and the weather held.`,
      metadata: { user_id: user },
    });
    if (i === 0) target = res.body.memo_uuid;
  }
  await eventually(async () => ((await call<{ pending: boolean }>('GET', `${stack.base}/api/v1/memo/${target}`)).body.pending ? undefined : true), 120_000);
  const scoped = await call<{ api_key: string }>('POST', `${stack.base}/api/v1/project/keys`, { name: 'bench: every memo', scopes: ['memos:read', 'search'], filters: SPACE });

  // Three gateways of one build beside the stack's, the same but for MEMEX_AUDIT (the control: off),
  // started afresh for every round: what one process happens to run faster by (placement, JIT
  // choices) then falls on each configuration alike instead of on one for the whole run.
  const [entry] = await bundleInPlace(build.path, [{ name: 'gateway', entry: 'services/gateway/src/main.ts' }]);
  const base: Record<Gateway, string> = { on: '', off: '', control: '' };
  let started = 0;
  const startGateways = async (): Promise<void> => {
    started++;
    for (const gateway of ['on', 'off', 'control'] as const) {
      const port = await freePort();
      const profile = values.profile ? ['--cpu-prof', `--cpu-prof-dir=${values.profile}`, `--cpu-prof-name=gateway-${gateway}-${started}.cpuprofile`] : [];
      const child = spawn(process.execPath, ['--enable-source-maps', ...profile, entry!], {
        cwd: REPO_ROOT,
        env: { ...process.env, ...stack.env, MEMEX_PORT: String(port), MEMEX_AUDIT: gateway === 'on' ? 'on' : 'off' },
        stdio: ['ignore', 'ignore', 'inherit'],
      });
      gateways.push(child);
      base[gateway] = `https://localhost:${port}`;
      await eventually(async () => ((await call('GET', `${base[gateway]}/api/v1/project`).catch(() => ({ status: 0 }))).status === 200 ? true : undefined), 60_000, 200);
    }
  };
  const stopGateways = async (): Promise<void> => {
    for (const child of gateways.splice(0)) {
      child.kill('SIGTERM');
      await exited(child);
    }
  };

  const keys = { owner: stack.key, scoped: scoped.body.api_key };
  const requests = {
    'GET /api/v1/memo/{id}': (way: Way) => ({ url: `${base[gatewayOf(way)]}/api/v1/memo/${target}` }),
    'POST /api/v1/search': (way: Way) => ({
      url: `${base[gatewayOf(way)]}/api/v1/search`,
      method: 'POST' as const,
      body: JSON.stringify({ query: 'otter survey river', search_method: 'chunk_vector_search', limit: 10, ...(way.startsWith('owner') ? { filters: SPACE } : {}) }),
    }),
  };
  const baselineCpu = new Map<string, number>();
  for (const [what, request] of Object.entries(requests)) {
    const run = (way: Way, seconds: number) =>
      load(`${what}, ${way}`, {
        ...request(way),
        headers: { authorization: `Bearer ${keys[way.startsWith('owner') ? 'owner' : 'scoped']}`, 'content-type': 'application/json' },
        connections,
        durationS: seconds,
      });
    const rps = new Map<Way, number[]>(WAYS.map((w) => [w, []]));
    const cpu = new Map<Way, number[]>(WAYS.map((w) => [w, []]));
    const cost = { rps: new Map<Way, number[]>(WAYS.map((w) => [w, []])), cpu: new Map<Way, number[]>(WAYS.map((w) => [w, []])) };
    // CPU µs per request by process kind (gateway: the three gateways together), to say where a cost lands.
    const byProcess = new Map<Way, Map<string, number[]>>(WAYS.map((w) => [w, new Map()]));
    for (let r = 0; r < rounds; r++) {
      await startGateways();
      for (const way of WAYS) await run(way, 1); // warm-up, not counted
      const order = WAYS.map((_, i) => WAYS[(i + r) % WAYS.length]!);
      const round = new Map<Way, { rps: number; cpu: number }>();
      for (const way of order) {
        const before = cpuSnapshot(process.pid);
        const result = await run(way, durationS);
        const used = cpuBetween(before, cpuSnapshot(process.pid));
        const seconds = used.reduce((sum, [, s]) => sum + s, 0);
        if (result.non2xx > 0 || result.errors > 0) throw new Error(`${result.label}: ${result.non2xx} non-2xx answers, ${result.errors} errors`);
        // CPU microseconds per answered request, every server process together.
        const answered = result.requestsPerSecond * durationS;
        const perRequest = (seconds * 1e6) / answered;
        for (const [name, s] of used) {
          const list = byProcess.get(way)!.get(name) ?? [];
          list.push((s * 1e6) / answered);
          byProcess.get(way)!.set(name, list);
        }
        round.set(way, { rps: result.requestsPerSecond, cpu: perRequest });
        rps.get(way)!.push(result.requestsPerSecond);
        cpu.get(way)!.push(perRequest);
      }
      await stopGateways();
      const baseline = round.get('owner, audit off')!;
      for (const way of WAYS) {
        cost.rps.get(way)!.push((1 - round.get(way)!.rps / baseline.rps) * 100);
        cost.cpu.get(way)!.push((round.get(way)!.cpu / baseline.cpu - 1) * 100);
      }
    }
    baselineCpu.set(what, percentile(cpu.get('owner, audit off')!, 50));
    const spread = (xs: number[], digits: number) => [0, 50, 100].map((p) => percentile(xs, p).toFixed(digits)).join(' / ');
    printTable(
      `${what}, ${rounds} rounds, min / median / max; costs against "owner, audit off" in the same round`,
      [
        ['', `${'requests/s'.padEnd(20)}${'throughput cost %'.padEnd(24)}${'CPU µs/request'.padEnd(20)}CPU cost %`],
        ...WAYS.map((way): [string, string] => {
          const base = way === 'owner, audit off';
          return [way, `${spread(rps.get(way)!, 0).padEnd(20)}${(base ? 'baseline' : spread(cost.rps.get(way)!, 1)).padEnd(24)}${spread(cpu.get(way)!, 0).padEnd(20)}${base ? 'baseline' : spread(cost.cpu.get(way)!, 1)}`];
        }),
      ],
    );
    const kinds = [...new Set(WAYS.flatMap((w) => [...byProcess.get(w)!.keys()]))].sort();
    printTable(`${what}: median CPU µs per request by process`, [
      ['', kinds.map((k) => k.padEnd(14)).join('')],
      ...WAYS.map((way): [string, string] => [way, kinds.map((k) => (byProcess.get(way)!.has(k) ? percentile(byProcess.get(way)!.get(k)!, 50).toFixed(1) : '-').padEnd(14)).join('')]),
    ]);
  }
  if (values.profile) printAuditShare(values.profile, entry!);
  await workAlone(stack.natsUrl, stack.projectId, target, baselineCpu);
  console.log(`\nHTTPS, ${connections} connections, ${durationS} s per measurement, ${memoCount} memos; one machine shared by the load generator and every process.`);
} finally {
  for (const child of gateways) {
    child.kill('SIGTERM');
    await exited(child);
  }
  build.remove();
  await stack.stop();
}

/**
 * The per-request work of a scoped call, timed alone: what the gateway adds (scope check, space
 * merged into the filters, memo ids noted), the memo service's space check, and the audit entry
 * from queue to stored message. Printed as µs per request and as a share of the baseline's CPU
 * per request measured above.
 */
async function workAlone(natsUrl: string, projectId: string, memoId: string, baselineCpu: Map<string, number>): Promise<void> {
  const nc = await connectNats({ url: natsUrl, name: 'bench-access', logger: silentLogger() });
  try {
    const trail = new AuditTrail(nc, await jetstreamManager(nc), { retentionMs: 3_600_000, replicas: 1, queries: 'off', logger: silentLogger() });
    await trail.open();
    const principal: Principal = { kind: 'project', projectId, organizationId: 'bench', keyId: '0123456789abcdef', owner: false, scopes: ['memos:read', 'search'], space: SPACE, subject: null, expiresAt: null };
    const request = { method: 'GET', routeOptions: { url: '/api/v1/memo/:id', config: { access: { scope: 'memos:read', action: 'memo.read' } } } } as unknown as FastifyRequest;
    const memo: FilterableMemo = { title: 'Field report 0', source: null, clientReferenceId: null, tags: ['otter'], metadata: { user_id: 'u1' } };
    const n = 50_000;
    const authorization: number[] = [];
    const audit: number[] = [];
    let sink = 0;
    for (let run = 0; run < 7; run++) {
      let t = process.hrtime.bigint();
      for (let i = 0; i < n; i++) {
        const caller = checkAccess(request, principal, projectId);
        const filters = [...SPACE, ...caller.space];
        if (matchesFilters(memo, caller.space)) sink += filters.length;
        noteMemoIds(request, [memoId]);
      }
      authorization.push(Number(process.hrtime.bigint() - t) / 1000 / n);
      // CPU of this process and of nats-server (storing the messages), per entry.
      const before = cpuSnapshot(process.pid);
      const own = process.cpuUsage();
      t = process.hrtime.bigint();
      for (let i = 0; i < n; i++) trail.record(request.auditNote!, 200, `bench-${run}-${i}`);
      await trail.settle();
      const used = process.cpuUsage(own);
      const nats = cpuBetween(before, cpuSnapshot(process.pid)).find(([name]) => name === 'nats-server')?.[1] ?? 0;
      audit.push(((used.user + used.system) / 1e6 + nats) * 1e6 / n);
    }
    if (sink === 0) throw new Error('the space did not match the memo');
    const med = (xs: number[]) => percentile(xs, 50);
    const share = (us: number) => [...baselineCpu].map(([what, cpu]) => `${((us / cpu) * 100).toFixed(2)}% of ${what.split(' ')[0]}'s`).join(', ');
    printTable(`The work alone, 7 runs of ${n.toLocaleString()} calls, min / median / max µs per request (share: the median against the baseline's CPU per request above)`, [
      ['authorization (scope, space, memo check)', `${[0, 50, 100].map((p) => percentile(authorization, p).toFixed(2)).join(' / ')} µs   ${share(med(authorization))}`],
      ['audit entry (queue, format, publish, store)', `${[0, 50, 100].map((p) => percentile(audit, p).toFixed(2)).join(' / ')} µs of CPU   ${share(med(audit))}`],
    ]);
  } finally {
    await nc.close();
  }
}

/**
 * Where an audit-on gateway's CPU went, from the `--profile` runs: the share of its busy time
 * (idle excluded) spent in the audit trail's code (auth/audit.ts, found by its lines in the
 * bundle) and all it called, and the garbage collector's share beside an audit-off gateway's.
 */
function printAuditShare(dir: string, bundle: string): void {
  const lines = readFileSync(bundle, 'utf8').split('\n');
  const first = lines.findIndex((l) => /^var AuditTrail = class/.test(l));
  const last = lines.findIndex((l, i) => i > first && l === '};');
  if (first < 0 || last < 0) throw new Error(`AuditTrail not found in ${bundle}`);
  const share = (gateway: Gateway) => {
    let busy = 0;
    let audit = 0;
    let gc = 0;
    for (const file of readdirSync(dir).filter((f) => f.startsWith(`gateway-${gateway}-`) && f.endsWith('.cpuprofile'))) {
      const profile = readCpuProfile(join(dir, file));
      const { byId, parent } = profileTree(profile);
      const inAudit = (id: number): boolean => {
        for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
          const frame = byId.get(at)!.callFrame;
          if (frame.url.endsWith(basename(bundle)) && frame.lineNumber >= first && frame.lineNumber <= last) return true;
        }
        return false;
      };
      for (const { node, us } of profileSamples(profile, byId)) {
        const name = node.callFrame.functionName;
        if (name === '(idle)') continue;
        busy += us;
        if (name === '(garbage collector)') gc += us;
        else if (inAudit(node.id)) audit += us;
      }
    }
    return { audit: (audit / busy) * 100, gc: (gc / busy) * 100 };
  };
  const on = share('on');
  const off = share('off');
  printTable('CPU profiles of the bench gateways (--profile), share of busy time', [
    ['audit on: audit trail code (queue, format, publish)', `${on.audit.toFixed(2)}%`],
    ['garbage collector, audit on / off', `${on.gc.toFixed(2)}% / ${off.gc.toFixed(2)}%`],
  ]);
}
