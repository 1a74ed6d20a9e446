#!/usr/bin/env node
/**
 * Health probe for Memex containers (Docker HEALTHCHECK, Compose healthcheck, Kubernetes exec
 * probes). No dependencies, so it starts in a few tens of milliseconds.
 *
 *   memex-health gateway ready|live
 *       GET https://127.0.0.1:$MEMEX_PORT/readyz (ready) or /healthz (live); healthy on 2xx.
 *
 *   memex-health memo|indexer|agent|<any other service> ready|live
 *       With MEMEX_HEALTH_PORT set (a plain-HTTP health port on the service, see
 *       docs/operations.md): GET http://127.0.0.1:$MEMEX_HEALTH_PORT/readyz or /healthz.
 *       Without it: a health ping over NATS (`memex.health.<service>` at the first NATS_URL), the
 *       same request the gateway's /readyz makes. Any instance of the service may answer it (the
 *       subject is served by a queue group), so it tells whether the service is up, not whether
 *       this container is; with one instance per service, as in Compose, that is the same thing.
 *       ready: healthy when an instance answers `ready: true`.
 *       live:  unhealthy only when NATS answers and no instance does; when NATS itself cannot be
 *              reached, restarting this container would not help, so it counts as alive.
 *
 * Exit 0 healthy, 1 unhealthy; one line on stdout or stderr says why. HEALTH_TIMEOUT_MS (default
 * 4000) bounds the whole probe.
 */
import { Buffer } from 'node:buffer';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { connect as netConnect } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import { URL } from 'node:url';

const MODES = ['ready', 'live'];
const timeoutMs = Number(process.env.HEALTH_TIMEOUT_MS || 4000);

function finish(healthy, message) {
  (healthy ? console.log : console.error)(`memex-health: ${message}`);
  process.exit(healthy ? 0 : 1);
}

/** GET `url`; resolves to the status code. The certificate is not checked: this is the container itself. */
function httpGet(url) {
  return new Promise((resolve, reject) => {
    const target = new URL(url);
    const send = target.protocol === 'https:' ? httpsRequest : httpRequest;
    const req = send(target, { method: 'GET', rejectUnauthorized: false, timeout: timeoutMs }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('timeout', () => req.destroy(new Error(`no answer within ${timeoutMs} ms`)));
    req.on('error', reject);
    req.end();
  });
}

async function probeHttp(url) {
  try {
    const status = await httpGet(url);
    finish(status >= 200 && status < 300, `${url} answered ${status}`);
  } catch (error) {
    finish(false, `${url}: ${error.message}`);
  }
}

/**
 * One request/reply over the NATS client protocol: resolves to the reply payload, to `null` when
 * the server says nobody serves the subject, and rejects with `error.unreachable = true` when no
 * NATS connection could be made.
 */
function natsRequest(natsUrl, subject) {
  const server = new URL(natsUrl.includes('://') ? natsUrl : `nats://${natsUrl}`);
  const host = server.hostname || '127.0.0.1';
  const port = Number(server.port || 4222);
  const inbox = `_INBOX.memex_health_${process.pid}_${Date.now()}`;
  return new Promise((resolve, reject) => {
    let socket = netConnect({ host, port });
    let connected = false;
    let upgraded = false;
    let buffer = Buffer.alloc(0);
    let timer;
    const fail = (error, unreachable = false) => {
      clearTimeout(timer);
      socket.destroy();
      reject(Object.assign(error, { unreachable }));
    };
    const done = (value) => {
      clearTimeout(timer);
      socket.destroy();
      resolve(value);
    };
    timer = setTimeout(() => fail(new Error(`no reply within ${timeoutMs} ms`), !connected), timeoutMs);

    const start = (info) => {
      connected = true;
      const connect = {
        verbose: false,
        pedantic: false,
        lang: 'memex-health',
        version: '1',
        protocol: 1,
        headers: true,
        no_responders: true,
        name: 'memex-health',
      };
      if (server.username && server.password) {
        connect.user = decodeURIComponent(server.username);
        connect.pass = decodeURIComponent(server.password);
      } else if (server.username) {
        connect.auth_token = decodeURIComponent(server.username);
      }
      if (info.auth_required && !connect.user && !connect.auth_token) {
        fail(new Error('the NATS server requires credentials and NATS_URL carries none'));
        return;
      }
      socket.write(`CONNECT ${JSON.stringify(connect)}\r\nSUB ${inbox} 1\r\nPUB ${subject} ${inbox} 0\r\n\r\nPING\r\n`);
    };

    // Handles every complete protocol line (and message payload) in the buffer.
    const onData = (chunk) => {
      buffer = Buffer.concat([buffer, chunk]);
      for (;;) {
        const eol = buffer.indexOf('\r\n');
        if (eol < 0) return;
        const line = buffer.subarray(0, eol).toString('utf8');
        const [op] = line.split(' ', 1);
        if (op === 'INFO') {
          buffer = buffer.subarray(eol + 2);
          const info = JSON.parse(line.slice(5));
          if (info.tls_required && !upgraded) {
            // Upgrade the connection, then send CONNECT over TLS.
            upgraded = true;
            socket.removeListener('data', onData);
            socket = tlsConnect({ socket, servername: host }, () => start(info));
            socket.on('data', onData);
            socket.on('error', (error) => fail(error, !connected));
          } else {
            start(info);
          }
        } else if (op === 'MSG' || op === 'HMSG') {
          const parts = line.split(' ');
          const total = Number(parts[parts.length - 1]);
          const headerBytes = op === 'HMSG' ? Number(parts[parts.length - 2]) : 0;
          if (buffer.length < eol + 2 + total + 2) return;
          const body = buffer.subarray(eol + 2, eol + 2 + total);
          buffer = buffer.subarray(eol + 2 + total + 2);
          const headers = body.subarray(0, headerBytes).toString('utf8');
          if (/^NATS\/1\.0 503/.test(headers)) done(null);
          else done(body.subarray(headerBytes).toString('utf8'));
          return;
        } else if (op === 'PING') {
          buffer = buffer.subarray(eol + 2);
          socket.write('PONG\r\n');
        } else if (op === '-ERR') {
          fail(new Error(`NATS refused: ${line.slice(5)}`));
          return;
        } else {
          // +OK, PONG
          buffer = buffer.subarray(eol + 2);
        }
      }
    };
    socket.on('data', onData);
    socket.on('error', (error) => fail(error, !connected));
  });
}

async function probeNats(service, mode) {
  const natsUrl = (process.env.NATS_URL || 'nats://127.0.0.1:4222').split(',')[0].trim();
  const where = natsUrl.replace(/\/\/[^@/]*@/, '//');
  let reply;
  try {
    reply = await natsRequest(natsUrl, `memex.health.${service}`);
  } catch (error) {
    if (mode === 'live' && error.unreachable) finish(true, `NATS at ${where} unreachable (${error.message}); not this container's fault`);
    finish(false, `${service} health ping over NATS at ${where}: ${error.message}`);
  }
  if (reply === null) finish(false, `no ${service} instance is serving health pings on NATS at ${where}`);
  let report;
  try {
    report = JSON.parse(reply);
  } catch {
    finish(false, `unreadable health reply: ${reply.slice(0, 200)}`);
  }
  if (mode === 'live') finish(true, `${service} instance ${report.instance} answered`);
  finish(report.ready === true, `${service} instance ${report.instance} ready=${report.ready} ${JSON.stringify(report.details ?? {})}`);
}

const [service, mode = 'ready'] = process.argv.slice(2);
// Any service of deploy/services.json: the gateway is probed over HTTPS, the others as below.
if (!/^[a-z][a-z0-9-]*$/.test(service ?? '') || !MODES.includes(mode)) {
  console.error(`usage: memex-health <gateway|memo|indexer|agent|…> [${MODES.join('|')}]`);
  process.exit(2);
}
if (service === 'gateway') {
  await probeHttp(`https://127.0.0.1:${process.env.MEMEX_PORT || 8443}/${mode === 'ready' ? 'readyz' : 'healthz'}`);
} else if (process.env.MEMEX_HEALTH_PORT) {
  await probeHttp(`http://127.0.0.1:${process.env.MEMEX_HEALTH_PORT}/${mode === 'ready' ? 'readyz' : 'healthz'}`);
} else {
  await probeNats(service, mode);
}
