import type { Attributes } from '@opentelemetry/api';
import { inSpan, SpanKind, tracingOn } from './context';

/** How one method's calls are traced: the span's name and attributes from its arguments. */
export type MethodSpan = (...args: never[]) => { name: string; attributes?: Attributes; kind?: SpanKind };

/**
 * `target` with the named async methods each run in a span (a port's adapter: the embedder, the
 * vector index). Off: `target` itself, untouched, so the hot path has no wrapper at all.
 */
export function traceMethods<T extends object>(target: T, spans: Partial<Record<keyof T, MethodSpan>>): T {
  if (!tracingOn()) return target;
  return new Proxy(target, {
    get(object, property, receiver) {
      const value: unknown = Reflect.get(object, property, receiver);
      if (typeof value !== 'function') return value;
      const describe = spans[property as keyof T] as ((...args: unknown[]) => ReturnType<MethodSpan>) | undefined;
      const method = value as (...args: unknown[]) => unknown;
      if (!describe) return method.bind(object);
      return (...args: unknown[]) => {
        const { name, attributes, kind } = describe(...args);
        return inSpan(name, { kind: kind ?? SpanKind.INTERNAL, ...(attributes ? { attributes } : {}) }, async () => method.apply(object, args));
      };
    },
  });
}
