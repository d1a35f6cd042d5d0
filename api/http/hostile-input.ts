import type Koa from 'koa';
import { ValidationFailed } from '../errors.js';

/**
 * Refusals of hostile input shared by both services (issue 7 item 5; docs/decisions.md "Issue 7",
 * "Hostile input"). They run before any route sees the request, so a refused request changes nothing:
 * - a parsed body nested deeper than MAX_BODY_DEPTH, or carrying NUL anywhere (a key or a string
 *   value): 422 (checked by the body factory, api/http/body.ts, right after parsing);
 * - NUL in the URL (raw or `%00`, in the path or the query string): 422 (refuseNulInUrl).
 * PostgreSQL refuses NUL in text (SQLSTATE 22021) and a deep body would overflow the stack of the
 * recursive code that reads it (validation, structuredClone, logging).
 */

/** Deepest nesting of objects and arrays a request body may have (the top-level object counts as 1). */
export const MAX_BODY_DEPTH = 64;

/** What is wrong with a body: nesting too deep, or NUL in a key or string at `path` (dotted). */
export type BodyProblem = { kind: 'depth' } | { kind: 'nul'; path: string };

const hasNul = (s: string) => s.includes('\u0000');

/**
 * Inspects a parsed body without recursion (an explicit stack, so any depth is safe to walk).
 * @param value the parsed JSON or form body
 * @param maxDepth deepest allowed nesting of objects and arrays (default MAX_BODY_DEPTH)
 * @returns the first problem found, or null when the body is fine
 */
export function inspectBody(value: unknown, maxDepth = MAX_BODY_DEPTH): BodyProblem | null {
  type Step = { key: string; up: Step | null } | null;
  const pathOf = (step: Step): string => {
    const keys: string[] = [];
    for (let s = step; s; s = s.up) keys.unshift(s.key.split('\u0000').join('\\u0000'));
    return keys.join('.');
  };
  const stack: { v: unknown; depth: number; at: Step }[] = [{ v: value, depth: 0, at: null }];
  while (stack.length) {
    const { v, depth, at } = stack.pop()!;
    if (typeof v === 'string') {
      if (hasNul(v)) return { kind: 'nul', path: pathOf(at) };
      continue;
    }
    if (v === null || typeof v !== 'object') continue;
    if (depth + 1 > maxDepth) return { kind: 'depth' };
    const keys = Array.isArray(v) ? v.map((_, i) => String(i)) : Object.keys(v);
    for (const key of keys) {
      const step = { key, up: at };
      if (hasNul(key)) return { kind: 'nul', path: pathOf(step) };
      stack.push({ v: (v as Record<string, unknown>)[key], depth: depth + 1, at: step });
    }
  }
  return null;
}

/**
 * Throws the 422 of a hostile body (see inspectBody); does nothing for a fine one.
 * @throws ValidationFailed: `errors.body` for a too deep body, `errors.<path>` for NUL
 */
export function refuseHostileBody(value: unknown): void {
  const problem = inspectBody(value);
  if (!problem) return;
  if (problem.kind === 'depth') {
    throw new ValidationFailed({
      body: [`The request body is nested deeper than ${MAX_BODY_DEPTH} levels of objects and arrays.`],
    });
  }
  const field = problem.path || 'body';
  const name = field.split('.').pop()!.replace(/_/g, ' ');
  throw new ValidationFailed({ [field]: [`The ${name} field must not contain NUL characters.`] });
}

/**
 * Middleware refusing NUL in the request URL: a raw NUL or `%00` in the path -> 422 `errors.path`,
 * in the query string -> 422 `errors.query`. (`%2500`, a literal "%00", is fine.)
 * @returns the Koa middleware (mount it right after the request log)
 */
export function refuseNulInUrl(): Koa.Middleware {
  const nul = (s: string) => s.includes('\u0000') || /%00/i.test(s);
  return async (ctx, next) => {
    const url = ctx.originalUrl ?? ctx.url;
    if (nul(url)) {
      const q = url.indexOf('?');
      const where = q >= 0 && !nul(url.slice(0, q)) ? 'query' : 'path';
      throw new ValidationFailed({ [where]: [`The ${where} must not contain NUL characters.`] });
    }
    await next();
  };
}
