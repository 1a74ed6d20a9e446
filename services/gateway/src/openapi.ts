import { Metrics, silentLogger } from '@memex/runtime';
import { buildGateway } from './app';
import { loadGatewayConfig } from './config';
import type { GatewayDeps } from './http/context';

export interface OpenApiDocument {
  openapi: string;
  servers?: { url: string; description?: string }[];
  paths: Record<string, Record<string, OpenApiOperation>>;
  components: { schemas: Record<string, JsonSchema> };
}
interface OpenApiOperation {
  operationId?: string;
  requestBody?: { content: Record<string, { schema: JsonSchema }> };
  responses?: Record<string, { content?: Record<string, { schema: JsonSchema }> }>;
}
export type JsonSchema = { $ref?: string; properties?: Record<string, JsonSchema>; [key: string]: unknown };

/**
 * The gateway's OpenAPI document without a running stack (building the app connects to nothing;
 * the deps it would use for requests are left out). For SDK drift checks and exporting the document.
 */
export async function openApiDocument(env: Record<string, string | undefined> = {}): Promise<OpenApiDocument> {
  // Route setup reads deps.content's parts by name only; nothing is called while building the document.
  const deps = { config: loadGatewayConfig(env), metrics: new Metrics(), logger: silentLogger(), instance: 'openapi', content: {} } as unknown as GatewayDeps;
  const app = await buildGateway(deps, { logger: silentLogger() });
  try {
    return (await app.inject({ method: 'GET', url: '/docs/json' })).json() as OpenApiDocument;
  } finally {
    await app.close();
  }
}
