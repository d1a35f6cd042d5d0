import type { Schema } from './validation.js';

/**
 * Conversion of the modules' ajv schemas (JSON Schema draft-07 as ajv reads it, plus a few ajv
 * extensions) into OpenAPI 3.1 Schema Objects (JSON Schema 2020-12 + the OAS vocabulary).
 * Used by the OpenAPI builder (api/http/openapi.ts); the route schemas themselves are never changed.
 */

/**
 * Keywords ajv or its plugins understand that OpenAPI 3.1 does not, or that confuse viewers:
 * dropped from the document (validation still uses them).
 * - `$async`, `$id`, `$schema`: ajv compilation details; an `$id` inside an OpenAPI document changes
 *   the base URI of every `$ref` under it.
 * - `errorMessage` (ajv-errors), `instanceof`/`typeof`/`regexp`/`transform`/`dynamicDefaults`
 *   (ajv-keywords), `formatMinimum`/`formatMaximum`/`formatExclusive*` (ajv-formats).
 */
export const AJV_ONLY_KEYWORDS: ReadonlySet<string> = new Set([
  '$async',
  '$id',
  '$schema',
  'errorMessage',
  'instanceof',
  'typeof',
  'regexp',
  'transform',
  'dynamicDefaults',
  'formatMinimum',
  'formatMaximum',
  'formatExclusiveMinimum',
  'formatExclusiveMaximum',
  'removeAdditional',
]);

/** Keywords whose value is one schema. */
const SCHEMA_KEYS = new Set([
  'items',
  'additionalItems',
  'additionalProperties',
  'not',
  'if',
  'then',
  'else',
  'contains',
  'propertyNames',
  'unevaluatedProperties',
  'unevaluatedItems',
  'contentSchema',
]);
/** Keywords whose value is an array of schemas. */
const SCHEMA_ARRAY_KEYS = new Set(['allOf', 'anyOf', 'oneOf', 'prefixItems']);
/** Keywords whose value maps names to schemas (the names are data, not keywords). */
const SCHEMA_MAP_KEYS = new Set(['properties', 'patternProperties', '$defs', 'definitions', 'dependentSchemas']);

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** A `{ $data: "..." }` value (ajv's data reference): not expressible in OpenAPI. */
function isDataRef(v: unknown): boolean {
  return isObject(v) && typeof v.$data === 'string';
}

function convertMap(v: unknown): unknown {
  if (!isObject(v)) return structuredClone(v);
  return Object.fromEntries(Object.entries(v).map(([k, s]) => [k, toOpenApiSchema(s as Schema)]));
}

/**
 * Returns an OpenAPI 3.1 copy of an ajv schema:
 * - drops AJV_ONLY_KEYWORDS and keywords whose value is an ajv `$data` reference;
 * - draft-07 forms become 2020-12 forms: tuple `items: [..]` -> `prefixItems` (and
 *   `additionalItems` -> `items`), `dependencies` -> `dependentRequired`/`dependentSchemas`;
 * - OpenAPI 3.0 leftovers: `nullable: true` -> `"null"` added to `type`; `example` -> `examples`.
 * Data-valued keywords (enum, const, default, required, examples) are copied verbatim.
 * Schemas must be self-contained (no `$ref` to another file); a `$ref` is copied as written.
 * @param schema a JSON schema object (or boolean schema)
 * @returns a new object; the input is not modified
 */
export function toOpenApiSchema(schema: Schema | boolean): Schema | boolean {
  if (typeof schema === 'boolean') return schema;
  if (!isObject(schema)) return structuredClone(schema) as Schema;
  const out: Schema = {};
  const tuple = Array.isArray(schema.items);
  for (const [key, value] of Object.entries(schema)) {
    if (AJV_ONLY_KEYWORDS.has(key) || isDataRef(value)) continue;
    if (key === 'nullable' || key === 'example' || key === 'dependencies') continue; // handled below
    if (key === 'items' && tuple) {
      out.prefixItems = (value as Schema[]).map((s) => toOpenApiSchema(s));
      continue;
    }
    if (key === 'additionalItems') {
      if (tuple) out.items = toOpenApiSchema(value as Schema);
      continue;
    }
    if (key === 'definitions') {
      out.$defs = convertMap(value);
      continue;
    }
    if (SCHEMA_KEYS.has(key)) out[key] = toOpenApiSchema(value as Schema);
    else if (SCHEMA_ARRAY_KEYS.has(key))
      out[key] = Array.isArray(value) ? value.map((s) => toOpenApiSchema(s as Schema)) : value;
    else if (SCHEMA_MAP_KEYS.has(key)) out[key] = convertMap(value);
    else out[key] = structuredClone(value);
  }
  if (schema.nullable === true && schema.type !== undefined) {
    const types = Array.isArray(schema.type) ? [...(schema.type as string[])] : [schema.type as string];
    if (!types.includes('null')) types.push('null');
    out.type = types;
  }
  if (schema.example !== undefined && out.examples === undefined) out.examples = [structuredClone(schema.example)];
  if (isObject(schema.dependencies)) {
    for (const [prop, dep] of Object.entries(schema.dependencies)) {
      if (Array.isArray(dep)) ((out.dependentRequired ??= {}) as Record<string, unknown>)[prop] = [...dep];
      else ((out.dependentSchemas ??= {}) as Record<string, unknown>)[prop] = toOpenApiSchema(dep as Schema);
    }
  }
  return out;
}

/**
 * The named properties of an object schema (top level and `allOf` members), with the names the
 * schema requires. Used to turn params/query schemas into OpenAPI parameters.
 * @returns property name -> schema, and the set of required names
 */
export function objectProperties(schema: Schema): { properties: Record<string, Schema>; required: Set<string> } {
  const properties: Record<string, Schema> = {};
  const required = new Set<string>();
  const visit = (s: unknown) => {
    if (!isObject(s)) return;
    if (isObject(s.properties)) Object.assign(properties, s.properties);
    if (Array.isArray(s.required)) for (const r of s.required) required.add(String(r));
    if (Array.isArray(s.allOf)) s.allOf.forEach(visit);
  };
  visit(schema);
  return { properties, required };
}
