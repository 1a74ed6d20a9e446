/**
 * Checks Kubernetes objects against the API's published schemas, offline, with the
 * `kubernetes-models` package (JSON schemas of the Kubernetes OpenAPI document, compiled with ajv,
 * one module per apiVersion and kind):
 *
 * - `schemaErrors`: the model's `validate()`: types, required fields, enums, formats;
 * - `unknownFieldErrors`: fields the API does not know (a misspelt `readinesProbe` passes the JSON
 *   schemas, which allow extra properties, but the API server rejects or drops it). The package's
 *   TypeScript declarations describe the same schemas, so each object is type-checked as an object
 *   literal against its kind's interface, where TypeScript reports every excess property.
 */
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

export interface KubernetesObject {
  apiVersion: string;
  kind: string;
  metadata?: { name?: string; namespace?: string; labels?: Record<string, string> };
  [field: string]: unknown;
}

/** An object and where it came from, for messages: `base/gateway.yaml#1 Deployment memex-gateway`. */
export interface LabelledObject {
  label: string;
  object: KubernetesObject;
}

const HERE = dirname(fileURLToPath(import.meta.url));

/** `kubernetes-models/<apiVersion>/<Kind>`: `apps/v1` → `kubernetes-models/apps/v1/Deployment`, `v1` → `kubernetes-models/v1/Service`. */
export function modelModule(object: Pick<KubernetesObject, 'apiVersion' | 'kind'>): string {
  return `kubernetes-models/${object.apiVersion}/${object.kind}`;
}

export function isKubernetesObject(value: unknown): value is KubernetesObject {
  const v = value as Partial<KubernetesObject> | null;
  return typeof v === 'object' && v !== null && typeof v.apiVersion === 'string' && typeof v.kind === 'string';
}

/** Schema violations of one object (empty when valid); an apiVersion/kind without a schema is one. */
export async function schemaErrors(object: KubernetesObject): Promise<string[]> {
  let module: Record<string, unknown>;
  try {
    module = (await import(/* @vite-ignore */ modelModule(object))) as Record<string, unknown>;
  } catch {
    return [`no schema for apiVersion ${object.apiVersion} kind ${object.kind} (${modelModule(object)})`];
  }
  const Model = module[object.kind] as (new (data: unknown) => { validate(): void }) | undefined;
  if (typeof Model !== 'function') return [`${modelModule(object)} exports no ${object.kind}`];
  try {
    new Model(object).validate();
    return [];
  } catch (error) {
    return [(error as Error).message];
  }
}

/** "Object literal may only specify known properties" (with and without a "did you mean"). */
const EXCESS_PROPERTY_CODES = new Set([2353, 2561]);

/**
 * Fields unknown to the API (and any other type error, such as a missing required field, unless
 * `partial`: for patches), per object label. All objects are checked in one TypeScript program
 * (about half a second).
 */
export function unknownFieldErrors(objects: LabelledObject[], options: { partial?: boolean } = {}): string[] {
  const file = join(HERE, '__kubernetes_objects__.ts');
  const owners: { from: number; to: number; label: string }[] = [];
  let source = '';
  let lines = 0;
  objects.forEach(({ label, object }, i) => {
    const chunk =
      `import type { I${object.kind} as T${i} } from '${modelModule(object)}';\n` +
      `export const object${i}: T${i} = ${JSON.stringify(object, null, 1)};\n`;
    const count = chunk.split('\n').length - 1;
    owners.push({ from: lines, to: lines + count, label });
    lines += count;
    source += chunk;
  });
  const compilerOptions: ts.CompilerOptions = {
    strict: true,
    noEmit: true,
    skipLibCheck: true,
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.ESNext,
    moduleResolution: ts.ModuleResolutionKind.Bundler,
    lib: ['lib.es2022.d.ts'],
    types: [],
  };
  const host = ts.createCompilerHost(compilerOptions);
  const getSourceFile = host.getSourceFile.bind(host);
  const fileExists = host.fileExists.bind(host);
  host.getSourceFile = (name, language, ...rest) =>
    name === file ? ts.createSourceFile(name, source, language) : getSourceFile(name, language, ...rest);
  host.fileExists = (name) => name === file || fileExists(name);
  const program = ts.createProgram([file], compilerOptions, host);
  return ts
    .getPreEmitDiagnostics(program)
    .filter((d) => d.file?.fileName === file)
    // A patch is a partial object: only its unknown fields count.
    .filter((d) => !options.partial || EXCESS_PROPERTY_CODES.has(d.code))
    .map((d) => {
      const line = d.file!.getLineAndCharacterOfPosition(d.start ?? 0).line;
      const owner = owners.find((o) => line >= o.from && line < o.to);
      return `${owner?.label ?? `line ${line + 1}`}: ${ts.flattenDiagnosticMessageText(d.messageText, ' ')}`;
    });
}
