import { request, type RequestOptions } from 'node:https';

export interface HttpsResponse<T = unknown> {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: T;
  text: string;
  /** The body as received (files, binary answers). */
  bytes: Buffer;
}

/** One HTTPS request with a JSON body; trusts `ca` (the stack's self-signed certificate). */
export function httpsJson<T = unknown>(
  method: string,
  url: string,
  options: {
    key?: string;
    body?: unknown;
    /** A body sent as is, with its own content type (multipart uploads), instead of JSON. */
    raw?: { bytes: Buffer; contentType: string };
    ca?: string | Buffer;
    headers?: Record<string, string>;
    agent?: RequestOptions['agent'];
  } = {},
): Promise<HttpsResponse<T>> {
  return new Promise((resolve, reject) => {
    const payload = options.raw ? options.raw.bytes : options.body === undefined ? undefined : JSON.stringify(options.body);
    const contentType = options.raw ? options.raw.contentType : 'application/json';
    const req = request(
      url,
      {
        method,
        ...(options.ca ? { ca: options.ca } : {}),
        ...(options.agent ? { agent: options.agent } : {}),
        headers: {
          ...(options.key ? { authorization: `Bearer ${options.key}` } : {}),
          ...(payload !== undefined ? { 'content-type': contentType, 'content-length': Buffer.byteLength(payload) } : {}),
          ...options.headers,
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const bytes = Buffer.concat(chunks);
          const text = bytes.toString('utf8');
          let body: unknown = text;
          try {
            body = text ? JSON.parse(text) : undefined;
          } catch {
            // Not JSON (SSE, HTML): keep the text.
          }
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: body as T, text, bytes });
        });
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    if (payload !== undefined) req.write(payload);
    req.end();
  });
}
