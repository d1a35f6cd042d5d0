import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsPkg from 'ajv-formats';

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];

type Json = Record<string, any>;

/** Resolves a local JSON pointer (`#/a/b`) in the document, or undefined. */
function resolve(doc: Json, ref: string): unknown {
  if (!ref.startsWith('#/')) return undefined;
  let cur: any = doc;
  for (const raw of ref.slice(2).split('/')) {
    const key = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    if (cur === null || typeof cur !== 'object' || !(key in cur)) return undefined;
    cur = cur[key];
  }
  return cur;
}

function walk(v: unknown, at: string, fn: (node: Json, at: string) => void): void {
  if (Array.isArray(v)) v.forEach((x, i) => walk(x, `${at}/${i}`, fn));
  else if (v && typeof v === 'object') {
    fn(v as Json, at);
    for (const [k, x] of Object.entries(v)) walk(x, `${at}/${k}`, fn);
  }
}

/**
 * Structural checks of an OpenAPI 3.1 document, standing in for a full validator:
 * required top-level fields; per operation an operationId (unique), tags declared at top level,
 * security naming declared schemes, at least one response, each with a description; path template
 * parameters and `in: path` parameters match both ways and are required; every local `$ref`
 * resolves; every schema compiles as JSON Schema 2020-12 under a strict Ajv2020 (unknown keywords
 * are errors, the OAS vocabulary excepted).
 * @returns a list of problems (empty when the document passes)
 */
export function structuralProblems(doc: Json): string[] {
  const problems: string[] = [];
  if (doc.openapi !== '3.1.0') problems.push(`openapi is ${doc.openapi}`);
  if (typeof doc.info?.title !== 'string' || !doc.info.title) problems.push('info.title missing');
  if (typeof doc.info?.version !== 'string' || !doc.info.version) problems.push('info.version missing');
  if (!doc.paths || typeof doc.paths !== 'object') problems.push('paths missing');
  const tagNames = new Set((doc.tags ?? []).map((t: Json) => t.name));
  const schemes = new Set(Object.keys(doc.components?.securitySchemes ?? {}));
  const opIds = new Map<string, string>();
  const ajv = new Ajv2020({
    strict: true,
    strictTypes: false,
    strictTuples: false,
    strictRequired: false,
    allErrors: true,
  });
  addFormatsPkg.default(ajv);
  ajv.addVocabulary(['discriminator', 'xml', 'externalDocs', 'example']);
  const compileSchema = (s: unknown, where: string) => {
    if (s && typeof s === 'object' && '$ref' in (s as Json)) return;
    try {
      ajv.compile(s as Json);
    } catch (e) {
      problems.push(`${where}: schema does not compile: ${(e as Error).message}`);
    }
  };

  for (const [path, item] of Object.entries<Json>(doc.paths ?? {})) {
    if (!path.startsWith('/')) problems.push(`path ${path} does not start with /`);
    const inPath = [...path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]).sort();
    for (const [method, op] of Object.entries<Json>(item)) {
      const where = `${method.toUpperCase()} ${path}`;
      if (!METHODS.includes(method)) {
        problems.push(`${where}: unknown method`);
        continue;
      }
      if (typeof op.operationId !== 'string' || !op.operationId) problems.push(`${where}: operationId missing`);
      else if (opIds.has(op.operationId))
        problems.push(`${where}: operationId ${op.operationId} also used by ${opIds.get(op.operationId)}`);
      else opIds.set(op.operationId, where);
      for (const t of op.tags ?? []) if (!tagNames.has(t)) problems.push(`${where}: tag ${t} not declared`);
      if (!Array.isArray(op.security)) problems.push(`${where}: security not stated`);
      for (const req of op.security ?? [])
        for (const s of Object.keys(req))
          if (!schemes.has(s)) problems.push(`${where}: security scheme ${s} not declared`);
      const responses = Object.entries<Json>(op.responses ?? {});
      if (!responses.length) problems.push(`${where}: no responses`);
      for (const [status, r] of responses) {
        if (!/^[1-5]\d\d$/.test(status)) problems.push(`${where}: bad status ${status}`);
        if (typeof r.description !== 'string' || !r.description)
          problems.push(`${where} ${status}: description missing`);
        for (const [type, media] of Object.entries<Json>(r.content ?? {}))
          compileSchema(media.schema, `${where} ${status} ${type}`);
      }
      const params: Json[] = op.parameters ?? [];
      const pathParams = params.filter((p) => p.in === 'path');
      const declared = pathParams.map((p) => p.name).sort();
      if (JSON.stringify(declared) !== JSON.stringify(inPath))
        problems.push(`${where}: path parameters ${declared} != template ${inPath}`);
      for (const p of pathParams)
        if (p.required !== true) problems.push(`${where}: path parameter ${p.name} not required`);
      const seen = new Set<string>();
      for (const p of params) {
        if (!['path', 'query', 'header', 'cookie'].includes(p.in))
          problems.push(`${where}: parameter ${p.name} in ${p.in}`);
        if (seen.has(`${p.in}:${p.name}`)) problems.push(`${where}: parameter ${p.name} twice`);
        seen.add(`${p.in}:${p.name}`);
        compileSchema(p.schema, `${where} parameter ${p.name}`);
      }
      for (const [type, media] of Object.entries<Json>(op.requestBody?.content ?? {}))
        compileSchema(media.schema, `${where} body ${type}`);
    }
  }
  for (const [name, s] of Object.entries(doc.components?.schemas ?? {})) compileSchema(s, `components.schemas.${name}`);
  walk(doc, '#', (node, at) => {
    if (typeof node.$ref === 'string' && resolve(doc, node.$ref) === undefined)
      problems.push(`${at}: $ref ${node.$ref} does not resolve`);
  });
  return problems;
}
