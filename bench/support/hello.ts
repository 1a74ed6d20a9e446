/**
 * A bare Fastify HTTPS hello-world, the baseline the gateway is measured against in the same run.
 *   tsx bench/support/hello.ts <port> <cert.pem> <key.pem>
 */
import { readFileSync } from 'node:fs';
import Fastify from 'fastify';

const [port, cert, key] = process.argv.slice(2);
const app = Fastify({ https: { cert: readFileSync(cert!), key: readFileSync(key!) }, logger: false });
app.get('/', async () => ({ hello: 'world' }));
await app.listen({ port: Number(port), host: '127.0.0.1' });
console.log('listening');
