/**
 * Every operation of the Memex HTTP API the SDK calls, by the gateway's OpenAPI `operationId`.
 * A unit test compares this table with the gateway's OpenAPI document both ways, so an API route
 * without an SDK method (or an SDK method without a route) fails the build.
 */
export const OPERATIONS = {
  createMemo: { method: 'POST', path: '/api/v1/memo' },
  createMemos: { method: 'POST', path: '/api/v1/memo/batch' },
  listMemos: { method: 'GET', path: '/api/v1/memo' },
  getMemo: { method: 'GET', path: '/api/v1/memo/{memo_id}' },
  updateMemo: { method: 'PATCH', path: '/api/v1/memo/{memo_id}' },
  deleteMemo: { method: 'DELETE', path: '/api/v1/memo/{memo_id}' },
  getMemoStatus: { method: 'GET', path: '/api/v1/memo/{memo_id}/status' },
  getMemoHistory: { method: 'GET', path: '/api/v1/memo/{memo_id}/history' },
  downloadMemoFile: { method: 'GET', path: '/api/v1/memo/{memo_id}/file' },
  search: { method: 'POST', path: '/api/v1/search' },
  chat: { method: 'POST', path: '/api/v1/chat' },
  generate: { method: 'POST', path: '/api/v1/generate' },
  listChats: { method: 'GET', path: '/api/v1/chat' },
  getChat: { method: 'GET', path: '/api/v1/chat/{chat_uuid}' },
  getProject: { method: 'GET', path: '/api/v1/project' },
  rotateProjectKey: { method: 'POST', path: '/api/v1/project/key' },
  resummarizeProject: { method: 'POST', path: '/api/v1/project/resummarize' },
  getResummarizeStatus: { method: 'GET', path: '/api/v1/project/resummarize' },
  createKey: { method: 'POST', path: '/api/v1/project/keys' },
  listKeys: { method: 'GET', path: '/api/v1/project/keys' },
  deleteKey: { method: 'DELETE', path: '/api/v1/project/keys/{key_id}' },
  createToken: { method: 'POST', path: '/api/v1/project/tokens' },
  listAudit: { method: 'GET', path: '/api/v1/audit' },
  listEvents: { method: 'GET', path: '/api/v1/events' },
  createWebhook: { method: 'POST', path: '/api/v1/webhooks' },
  listWebhooks: { method: 'GET', path: '/api/v1/webhooks' },
  deleteWebhook: { method: 'DELETE', path: '/api/v1/webhooks/{webhook_id}' },
  listWebhookDeliveries: { method: 'GET', path: '/api/v1/webhooks/{webhook_id}/deliveries' },
} as const satisfies Record<string, { method: 'GET' | 'POST' | 'PATCH' | 'DELETE'; path: string }>;

export type OperationId = keyof typeof OPERATIONS;
