import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import addFormatsPkg from 'ajv-formats';
import { ValidationFailed, type FieldErrors } from '../errors.js';

/** JSON schema as written in the modules' schemas.ts files (plain objects, OpenAPI 3.1 compatible). */
export type Schema = Record<string, unknown>;

/**
 * Pattern of names and identifiers (issue 7): one line, no C0 control character (NUL, tab, CR, LF,
 * ...) and no DEL. A plain JSON Schema `pattern`, so every OpenAPI reader understands it; free text
 * (addresses, descriptions, bodies) does not use it, but NUL is refused in every body string anyway
 * (api/http/hostile-input.ts). Spread `singleLine` into a string schema.
 */
export const SINGLE_LINE_PATTERN = '^[^\\u0000-\\u001f\\u007f]*$';
/** `{pattern: SINGLE_LINE_PATTERN}`: spread into the schema of a name or identifier. */
export const singleLine = { pattern: SINGLE_LINE_PATTERN } as const;

function makeAjv(removeAdditional: boolean): Ajv {
  const ajv = new Ajv({
    allErrors: true,
    coerceTypes: false,
    useDefaults: true,
    removeAdditional,
    strict: false,
  });
  addFormatsPkg.default(ajv);
  return ajv;
}

/**
 * Bodies: JSON types are kept as sent (a string "5" is not an integer), and a property the schema
 * does not allow (`additionalProperties: false`) is refused with 422, as the OpenAPI document says.
 */
export const bodyAjv = makeAjv(false);
/**
 * Query strings and path parameters: unknown query parameters are dropped; run coerceQuery() first
 * (validate() with this instance does), so only plain digit strings become numbers.
 */
export const queryAjv = makeAjv(true);

const INTEGER = /^-?[0-9]+$/;
const NUMBER = /^-?[0-9]+(\.[0-9]+)?$/;

/** Type names of a property schema (`type: 'integer'` or `type: ['integer', 'null']`). */
function typesOf(s: unknown): string[] {
  const t = (s as { type?: unknown } | undefined)?.type;
  return Array.isArray(t) ? t.map(String) : typeof t === 'string' ? [t] : [];
}

/**
 * Turns the strings of a query, path or form object into the numbers and booleans its schema asks
 * for, strictly (issue 7 item 5): an integer only from plain decimal digits (an optional minus
 * sign, so `-3` fails `minimum`, not the type), a number also with a decimal fraction, a boolean
 * only from `true`/`false`. Anything else (`0x10`, `1e3`, ` 5`, `1.0` for an integer, an array of a
 * repeated parameter) stays as it is, so validation answers 422 "must be integer". ajv's own
 * coercion (off here) would accept all of those. Top-level properties only (queries are flat).
 * @param schema an object schema (properties at the top level or in `allOf`)
 * @param value the object to change in place
 * @returns the same object
 */
export function coerceQuery<T extends Record<string, unknown>>(schema: Schema, value: T): T {
  const props: Record<string, unknown> = {};
  const visit = (s: unknown) => {
    const o = s as { properties?: Record<string, unknown>; allOf?: unknown[] } | undefined;
    if (o?.properties) Object.assign(props, o.properties);
    o?.allOf?.forEach(visit);
  };
  visit(schema);
  const out = value as Record<string, unknown>;
  for (const [name, raw] of Object.entries(out)) {
    if (typeof raw !== 'string' || !(name in props)) continue;
    const types = typesOf(props[name]);
    if (types.includes('string')) continue;
    if ((types.includes('integer') && INTEGER.test(raw)) || (types.includes('number') && NUMBER.test(raw)))
      out[name] = Number(raw);
    else if (types.includes('boolean') && (raw === 'true' || raw === 'false')) out[name] = raw === 'true';
  }
  return value;
}

const cache = new WeakMap<object, ValidateFunction>();

/** Compiles a schema once (cached by identity). */
export function compile(ajv: Ajv, schema: Schema): ValidateFunction {
  let fn = cache.get(schema);
  if (!fn) {
    fn = ajv.compile(schema);
    cache.set(schema, fn);
  }
  return fn;
}

function fieldOf(e: ErrorObject): string {
  const base = e.instancePath.replace(/^\//, '').split('/').filter(Boolean).join('.');
  const extra =
    e.keyword === 'required'
      ? (e.params as { missingProperty: string }).missingProperty
      : e.keyword === 'additionalProperties'
        ? (e.params as { additionalProperty: string }).additionalProperty
        : '';
  return [base, extra].filter(Boolean).join('.') || 'body';
}

function reason(e: ErrorObject, field: string): string {
  const name = field.split('.').pop()!.replace(/_/g, ' ');
  switch (e.keyword) {
    case 'required':
      return `The ${name} field is required.`;
    case 'type':
      return `The ${name} field must be ${String((e.params as { type: string }).type).replace(',', ' or ')}.`;
    case 'enum':
      return `The selected ${name} is invalid. Allowed: ${(e.params as { allowedValues: unknown[] }).allowedValues.filter((v) => v !== null).join(', ')}.`;
    case 'additionalProperties':
      return `The ${name} field is not allowed.`;
    case 'format':
      return `The ${name} field must be a valid ${(e.params as { format: string }).format}.`;
    case 'minimum':
      return `The ${name} field must be at least ${(e.params as { limit: number }).limit}.`;
    case 'maximum':
      return `The ${name} field must not be greater than ${(e.params as { limit: number }).limit}.`;
    case 'minLength':
      return `The ${name} field must be at least ${(e.params as { limit: number }).limit} characters.`;
    case 'maxLength':
      return `The ${name} field must not be greater than ${(e.params as { limit: number }).limit} characters.`;
    case 'pattern':
      if ((e.params as { pattern: string }).pattern === SINGLE_LINE_PATTERN)
        return `The ${name} field must be one line without control characters.`;
      return `The ${name} field format is invalid.`;
    default:
      return `The ${name} field ${e.message ?? 'is invalid'}.`;
  }
}

/** Converts ajv errors into Laravel-layout field errors (dotted paths). */
export function toFieldErrors(errors: ErrorObject[] | null | undefined): FieldErrors {
  const out: FieldErrors = {};
  for (const e of errors ?? []) {
    if (e.keyword === 'if' || e.keyword === 'anyOf' || e.keyword === 'oneOf') continue;
    const f = fieldOf(e);
    out[f] ??= [];
    const r = reason(e, f);
    if (!out[f].includes(r)) out[f].push(r);
  }
  return out;
}

/**
 * Validates (and defaults in place) a value; with queryAjv, coerceQuery() runs first.
 * @returns the value, typed as T
 * @throws ValidationFailed (422) with field errors
 */
export function validate<T>(ajv: Ajv, schema: Schema, value: unknown): T {
  const fn = compile(ajv, schema);
  if (ajv === queryAjv && value && typeof value === 'object' && !Array.isArray(value))
    coerceQuery(schema, value as Record<string, unknown>);
  if (!fn(value)) throw new ValidationFailed(toFieldErrors(fn.errors));
  return value as T;
}
