import { request as httpRequest, type RequestOptions } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { LookupAddress } from 'node:dns';
import { resolveWebhookHost } from '@memex/runtime';

/** The most of a receiver's reply that is read; the rest is dropped with the connection. */
export const REPLY_BODY_LIMIT = 64 * 1024;

export interface SendOptions {
  timeoutMs: number;
  allowPrivate: boolean;
}

export interface SendResult {
  /** The receiver's HTTP status; null when none came (refused address, network error, timeout). */
  status: number | null;
  ok: boolean;
  error?: string;
  /** What was read of the reply body (at most REPLY_BODY_LIMIT bytes). */
  replyBytes: number;
}

type LookupCallback = (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/**
 * POSTs one delivery. The host is resolved and every address checked when the connection is made
 * (the request's own lookup), so a name cannot be re-pointed at a private address between a check
 * and the connect; redirects are not followed (a 3xx is a failure), the reply is read to at most
 * REPLY_BODY_LIMIT bytes, and the whole exchange is bounded by `timeoutMs`.
 */
export async function sendWebhook(url: URL, body: string, headers: Record<string, string>, options: SendOptions): Promise<SendResult> {
  const lookup = (hostname: string, lookupOptions: { all?: boolean }, callback: LookupCallback) => {
    resolveWebhookHost(hostname, options.allowPrivate).then(
      (addresses) => {
        if (lookupOptions.all) callback(null, addresses);
        else callback(null, addresses[0]!.address, addresses[0]!.family);
      },
      (error: unknown) => callback(error as NodeJS.ErrnoException, ''),
    );
  };
  try {
    // An IP literal is not looked up by the socket: check it here.
    if (/^[\d.]+$|^\[.*\]$/.test(url.hostname)) await resolveWebhookHost(url.hostname, options.allowPrivate);
  } catch (error) {
    return { status: null, ok: false, error: (error as Error).message, replyBytes: 0 };
  }
  const requestOptions: RequestOptions = {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)), 'user-agent': 'Memex-Webhooks/1', ...headers },
    lookup: lookup as unknown as RequestOptions['lookup'],
    agent: false,
  };
  const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise<SendResult>((resolve) => {
    let settled = false;
    const finish = (result: SendResult) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(result);
    };
    const req = send(url, requestOptions, (res) => {
      let read = 0;
      res.on('data', (chunk: Buffer) => {
        read += chunk.length;
        if (read >= REPLY_BODY_LIMIT) {
          res.destroy();
          done();
        }
      });
      const status = res.statusCode ?? 0;
      const done = () => {
        const ok = status >= 200 && status < 300;
        finish({ status, ok, ...(ok ? {} : { error: status >= 300 && status < 400 ? `redirect (${status}) not followed` : `receiver answered ${status}` }), replyBytes: Math.min(read, REPLY_BODY_LIMIT) });
      };
      res.on('end', done);
      res.on('close', done);
      res.on('error', done);
    });
    const timer = setTimeout(() => {
      req.destroy(new Error(`no answer within ${options.timeoutMs} ms`));
    }, options.timeoutMs);
    req.on('error', (error) => finish({ status: null, ok: false, error: error.message, replyBytes: 0 }));
    req.end(body);
  });
}
