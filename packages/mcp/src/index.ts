export { MEMO_URI_PREFIX, createMemexMcpServer } from './server';
export { serveStdio } from './stdio';
export { handleMcpHttp } from './http';
