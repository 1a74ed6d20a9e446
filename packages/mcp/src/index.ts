export { MEMO_URI_PREFIX, TOOL_SCOPES, createMemexMcpServer } from './server';
export { serveStdio } from './stdio';
export { handleMcpHttp } from './http';
