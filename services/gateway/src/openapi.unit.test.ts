import { describe, expect, it } from 'vitest';
import { openApiDocument } from './openapi';

describe('OpenAPI document (for generators)', () => {
  it('names every API operation once, names its schemas, and lists a server', async () => {
    const doc = await openApiDocument();
    const ids: string[] = [];
    for (const [path, methods] of Object.entries(doc.paths)) {
      if (!path.startsWith('/api/')) continue;
      for (const [method, operation] of Object.entries(methods)) {
        expect(operation.operationId, `${method.toUpperCase()} ${path}`).toMatch(/^[a-z][A-Za-z]+$/);
        ids.push(operation.operationId!);
      }
    }
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids).toEqual(expect.arrayContaining(['createMemo', 'createMemos', 'getMemo', 'updateMemo', 'deleteMemo', 'search', 'chat', 'generate', 'listChats', 'getChat', 'getProject', 'rotateProjectKey']));
    expect(Object.keys(doc.components.schemas)).toEqual(expect.arrayContaining(['Memo', 'CreateMemoBody', 'CreateMemosBody', 'CreateMemosResponse', 'SearchBody', 'SearchResultItem', 'ChatBody', 'Citation', 'ErrorResponse', 'ProjectInfo']));
    expect(Object.keys(doc.components.schemas).filter((name) => name.startsWith('def-'))).toEqual([]);
    expect(doc.servers?.[0]?.url).toBe('/');
  });
});
