import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import addFormatsPkg from 'ajv-formats';
import { ValidationFailed, type FieldErrors } from '../errors.js';

const addFormats = (addFormatsPkg as unknown as { default: typeof addFormatsPkg }).default ?? addFormatsPkg;

/** JSON schema as written in the modules' schemas.ts files (plain objects, OpenAPI 3.1 compatible). */
export type Schema = Record<string, unknown>;

function makeAjv(coerce: boolean): Ajv {
  const ajv = new Ajv({
    allErrors: true,
    coerceTypes: coerce,
    useDefaults: true,
    removeAdditional: true,
    strict: false,
  });
  (addFormats as unknown as (a: Ajv) => void)(ajv);
  return ajv;
}

/** Bodies: JSON types are kept as sent (a string "5" is not an integer). */
export const bodyAjv = makeAjv(false);
/** Query strings and path parameters: strings are coerced to the schema's types. */
export const queryAjv = makeAjv(true);

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
  const extra = e.keyword === 'required' ? (e.params as { missingProperty: string }).missingProperty : '';
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
 * Validates (and coerces/defaults in place) a value.
 * @returns the value, typed as T
 * @throws ValidationFailed (422) with field errors
 */
export function validate<T>(ajv: Ajv, schema: Schema, value: unknown): T {
  const fn = compile(ajv, schema);
  if (!fn(value)) throw new ValidationFailed(toFieldErrors(fn.errors));
  return value as T;
}
