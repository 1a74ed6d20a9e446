import { createWriteStream, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { createLogger, silentLogger, type Logger } from '@memex/runtime';

let started = 0;

/**
 * The logger of a test stack: silent, unless MEMEX_TEST_LOG_DIR names a directory, where every
 * service's log of the stack goes to `<name>-<pid>-<n>.log` (debug level), to read after a failure.
 */
export function testStackLogger(name: string): Logger {
  const dir = process.env.MEMEX_TEST_LOG_DIR;
  if (!dir) return silentLogger();
  mkdirSync(dir, { recursive: true });
  const file = join(dir, `${name}-${process.pid}-${++started}.log`);
  return createLogger({ service: name, level: 'debug', destination: createWriteStream(file, { flags: 'a' }) });
}
