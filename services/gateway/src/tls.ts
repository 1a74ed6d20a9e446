import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Logger } from '@memex/runtime';

export interface TlsMaterial {
  cert: string;
  key: string;
  /** Where they came from: the configured files, or the self-signed pair in the data dir. */
  source: 'configured' | 'self-signed';
  certPath: string;
}

/**
 * The gateway's certificate: the configured files, or a self-signed pair made once in
 * `<data dir>/tls` (valid ten years, for localhost and 127.0.0.1) and reused on later starts.
 */
export async function loadTls(
  options: { certFile?: string | undefined; keyFile?: string | undefined; dataDir: string },
  logger?: Logger,
): Promise<TlsMaterial> {
  if (options.certFile && options.keyFile) {
    return {
      cert: readFileSync(options.certFile, 'utf8'),
      key: readFileSync(options.keyFile, 'utf8'),
      source: 'configured',
      certPath: options.certFile,
    };
  }
  const dir = join(options.dataDir, 'tls');
  const certPath = join(dir, 'cert.pem');
  const keyPath = join(dir, 'key.pem');
  if (!existsSync(certPath) || !existsSync(keyPath)) {
    // Several gateways may start at once on one data dir: each builds the pair in a directory of its
    // own and renames it into place; the first rename wins and the others use the winner's pair.
    const staging = `${dir}.${process.pid}-${Date.now()}`;
    mkdirSync(staging, { recursive: true, mode: 0o700 });
    const now = new Date();
    // (imported only to make a certificate: ~17 MiB a gateway that has its pair never needs)
    const { generate } = await import('selfsigned');
    const pems = await generate([{ name: 'commonName', value: 'localhost' }], {
      keyType: 'ec',
      curve: 'P-256',
      algorithm: 'sha256',
      notBeforeDate: now,
      notAfterDate: new Date(now.getTime() + 10 * 365 * 24 * 3600 * 1000),
      extensions: [
        { name: 'basicConstraints', cA: false },
        { name: 'keyUsage', digitalSignature: true, keyEncipherment: true },
        { name: 'extKeyUsage', serverAuth: true },
        {
          name: 'subjectAltName',
          altNames: [
            { type: 2, value: 'localhost' },
            { type: 7, ip: '127.0.0.1' },
            { type: 7, ip: '::1' },
          ],
        },
      ],
    });
    writeFileSync(join(staging, 'key.pem'), pems.private, { mode: 0o600 });
    writeFileSync(join(staging, 'cert.pem'), pems.cert, { mode: 0o600 });
    try {
      if (existsSync(dir) && !existsSync(certPath)) rmSync(dir, { recursive: true, force: true });
      renameSync(staging, dir);
      logger?.warn({ certPath }, 'generated a self-signed TLS certificate; set MEMEX_TLS_CERT and MEMEX_TLS_KEY for production');
    } catch {
      rmSync(staging, { recursive: true, force: true });
    }
  }
  return { cert: readFileSync(certPath, 'utf8'), key: readFileSync(keyPath, 'utf8'), source: 'self-signed', certPath };
}
