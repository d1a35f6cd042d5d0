import { expect } from 'chai';
import fc from 'fast-check';
import { buildOpenApi, type OpenApiDocument } from '../../api/http/openapi.js';
import { webRoutes } from '../../api/routes.js';
import { webApiInfo, webTagDescriptions } from '../../api/docs/info.js';
import { buildMailOpenApi } from '../../api/mail/openapi.js';
import { mailRoutes } from '../../api/mail/table.js';
import {
  credentials,
  faultWorld,
  fillPath,
  sampleParam,
  type DocOperation,
  type FaultWorld,
  type Service,
} from './world.js';

/**
 * The property-based fuzzer of issue 7 item 7: requests generated from both OpenAPI documents
 * (the web service's and the Mailbox API's, built by the same code that serves /openapi.json) with
 * fast-check, a fixed seed and RUNS requests per operation, against both apps in-process. Path
 * parameters, query parameters, bodies and headers are either valid-ish (drawn from the schema,
 * real ids of the caller's tenant) or hostile (deep JSON, NUL, huge strings, wrong types, extra
 * fields, odd ids, malformed JSON, oversized bodies). Every answer must be a status the document
 * lists for the operation, or one of GENERIC, with a JSON body of the service's format and a
 * request id; never a 5xx.
 */

/** Requests per operation. */
const RUNS = 40;
/** The fixed seed (each operation adds its index, so adding an operation does not reshuffle the others). */
const SEED = 20_260_707;
/** Statuses any operation may answer although its document entry does not list them (issue 7 item 7). */
const GENERIC = [401, 403, 404, 405, 413, 415, 422, 429];

type Schema = Record<string, unknown> & {
  type?: string | string[];
  enum?: unknown[];
  const?: unknown;
  properties?: Record<string, Schema>;
  required?: string[];
  items?: Schema;
};

/** A JSON text placed verbatim by toJson (for values JSON.stringify cannot or should not make). */
class RawJson {
  constructor(readonly text: string) {}
}

/** JSON.stringify that also writes RawJson values as they are. */
function toJson(v: unknown): string {
  if (v instanceof RawJson) return v.text;
  if (Array.isArray(v)) return `[${v.map(toJson).join(',')}]`;
  if (v && typeof v === 'object')
    return `{${Object.entries(v)
      .map(([k, x]) => `${JSON.stringify(k)}:${toJson(x)}`)
      .join(',')}}`;
  return JSON.stringify(v) ?? 'null';
}

const deepText = (n: number) => '{"a":'.repeat(n) + '1' + '}'.repeat(n);

/** Values no field expects. */
const hostileValue: fc.Arbitrary<unknown> = fc.oneof(
  fc.constantFrom(
    'a\u0000b',
    '\u0000',
    '%00',
    '',
    ' ',
    '\n\r\t\u0007\u001b[31m',
    '\u202eevil',
    '0x10',
    '1e3',
    ' 5',
    '-0',
    'NaN',
    'null',
    'true',
    '99999999999999999999999',
    "' OR 1=1 --",
    '<script>alert(1)</script>',
    '../../etc/passwd',
    '${jndi:ldap://x}',
    '\ud800',
    0,
    -1,
    1.5,
    2 ** 31,
    -(2 ** 31) - 1,
    2 ** 53 + 2,
    1e308,
    true,
    false,
    null,
    [],
    {},
    [1, 'two', null],
    { $ne: 1 },
    { __proto__x: { admin: true } },
  ),
  fc.constantFrom(
    new RawJson(deepText(5000)),
    new RawJson(deepText(65)),
    new RawJson('{"__proto__":{"admin":true}}'),
    'x'.repeat(100_000),
    'é'.repeat(20_000),
  ),
  fc.string({ unit: 'grapheme', maxLength: 40 }),
  fc.string({ unit: 'binary', maxLength: 20 }),
  fc.integer(),
  fc.double(),
);

/** Path segment values that are not a plain id or name. */
const hostileSegment: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(
    '0x1',
    '239.0',
    ' 114',
    '1e3',
    '+1',
    '-1',
    '0',
    '99999999999',
    '\u0000',
    'a\u0000b',
    'x'.repeat(5000),
    '.',
    'a/b',
    '💥',
    '\u0007',
    'NaN',
    "'",
  ),
  // never a plain number: that could be the id of a token the other requests use (DELETE revokes it)
  fc.string({ unit: 'grapheme', minLength: 1, maxLength: 30 }).filter((s) => !/^[0-9]+$/.test(s)),
);

const EXAMPLE_EMAILS = ['a@example.test', 'budi.santoso@isp.example', 'x+y@mail.test'];

/** A valid-ish value of a schema: its enum, const, type, bounds, format and pattern. */
function validValue(w: FaultWorld, s: Schema | undefined, name: string, depth = 0): fc.Arbitrary<unknown> {
  if (!s || depth > 4) return fc.constant('x');
  if (s.const !== undefined) return fc.constant(s.const);
  if (Array.isArray(s.enum)) return fc.constantFrom(...s.enum);
  const types = (Array.isArray(s.type) ? s.type : [s.type ?? 'string']).filter(Boolean) as string[];
  return fc.oneof(...types.map((t) => byType(w, t, s, name, depth)));
}

function byType(w: FaultWorld, type: string, s: Schema, name: string, depth: number): fc.Arbitrary<unknown> {
  const num = (k: string) => (typeof s[k] === 'number' ? (s[k] as number) : undefined);
  switch (type) {
    case 'null':
      return fc.constant(null);
    case 'boolean':
      return fc.boolean();
    case 'integer': {
      const min = Math.max(num('minimum') ?? -1000, -(2 ** 31));
      const max = Math.min(num('maximum') ?? 1000, 2 ** 31 - 1);
      const real = name.endsWith('_id') || name === 'id' ? [w.ids.customerId, w.ids.packageId, w.ids.onuId] : [];
      return fc.oneof(
        fc.integer({ min, max: Math.min(max, min + 100) }),
        fc.integer({ min, max }),
        ...(real.length ? [fc.constantFrom(...real)] : []),
      );
    }
    case 'number':
      return fc.double({
        min: num('minimum') ?? -1e6,
        max: num('maximum') ?? 1e6,
        noNaN: true,
        noDefaultInfinity: true,
      });
    case 'array':
      return fc.array(validValue(w, s.items, name, depth + 1), { maxLength: 3 });
    case 'object':
      return objectValue(w, s, depth + 1);
    default: {
      const minLength = num('minLength') ?? 0;
      const maxLength = Math.min(num('maxLength') ?? 60, 60);
      if (s.format === 'email') return fc.oneof(fc.constantFrom(...EXAMPLE_EMAILS), fc.emailAddress());
      if (s.format === 'date-time')
        return fc
          .date({ min: new Date('2000-01-01'), max: new Date('2100-01-01'), noInvalidDate: true })
          .map((d) => d.toISOString());
      if (s.format === 'date')
        return fc
          .date({ min: new Date('2000-01-01'), max: new Date('2100-01-01'), noInvalidDate: true })
          .map((d) => d.toISOString().slice(0, 10));
      if (typeof s.pattern === 'string')
        return fc
          .stringMatching(new RegExp(s.pattern))
          .filter((x) => x.length >= minLength && x.length <= (num('maxLength') ?? Infinity));
      return fc.string({ minLength, maxLength: Math.max(minLength, maxLength) });
    }
  }
}

/** An object of a schema: required properties usually there, optional ones sometimes, values mostly valid. */
function objectValue(w: FaultWorld, s: Schema, depth = 0): fc.Arbitrary<Record<string, unknown>> {
  const props = Object.entries(s.properties ?? {});
  const required = new Set(s.required ?? []);
  const entries = props.map(([name, ps]) =>
    fc.tuple(
      fc.constant(name),
      fc.oneof(
        { weight: required.has(name) ? 8 : 3, arbitrary: validValue(w, ps, name, depth) },
        { weight: 1, arbitrary: hostileValue },
      ),
      fc.integer({ min: 0, max: 9 }),
    ),
  );
  return fc.tuple(...entries).map((list) => {
    const out: Record<string, unknown> = {};
    for (const [name, value, roll] of list) if (roll < (required.has(name) ? 9 : 5)) out[name] = value;
    return out;
  });
}

/** One generated request. */
interface FuzzRequest {
  path: string;
  headers: Record<string, string>;
  body?: string;
}

/** The request arbitrary of one operation. */
function requestArb(w: FaultWorld, service: Service, method: string, template: string, op: DocOperation) {
  const params = op.parameters ?? [];
  const pathNames = params.filter((p) => p.in === 'path').map((p) => p.name);
  const pathArb = fc
    .tuple(
      ...pathNames.map((n) =>
        fc.oneof(
          { weight: 4, arbitrary: fc.constant(sampleParam(w, template, n)) },
          { weight: 1, arbitrary: hostileSegment },
        ),
      ),
    )
    .map((values) => fillPath(template, (n) => values[pathNames.indexOf(n)]));
  const queryParams = params.filter((p) => p.in === 'query');
  const queryArb = fc
    .tuple(
      fc.tuple(
        ...queryParams.map((p) =>
          fc.oneof(
            { weight: 3, arbitrary: fc.constant(undefined) },
            { weight: 3, arbitrary: validValue(w, p.schema as Schema, p.name) },
            { weight: 2, arbitrary: hostileValue.filter((v) => typeof v === 'string' || typeof v === 'number') },
            { weight: 1, arbitrary: fc.array(fc.constantFrom('1', '2', 'x'), { minLength: 2, maxLength: 3 }) },
          ),
        ),
      ),
      fc.option(fc.tuple(fc.constantFrom('unknown', '__proto__', 'page[]', 'a%00'), fc.string({ maxLength: 10 }))),
    )
    .map(([values, extra]) => {
      const parts: string[] = [];
      queryParams.forEach((p, i) => {
        const v = values[i];
        if (v === undefined) return;
        for (const x of Array.isArray(v) ? v : [v])
          parts.push(`${p.name}=${encodeURIComponent(String(x).replace(/[\ud800-\udfff]/g, '?'))}`);
      });
      if (extra) parts.push(`${extra[0]}=${encodeURIComponent(extra[1])}`);
      return parts.length ? `?${parts.join('&')}` : '';
    });
  const bodySchema = op.requestBody?.content['application/json']?.schema as Schema | undefined;
  const bodyArb: fc.Arbitrary<{ text?: string; type?: string }> = bodySchema
    ? fc.oneof(
        { weight: 6, arbitrary: objectValue(w, bodySchema).map((o) => ({ text: toJson(o) })) },
        {
          weight: 2,
          arbitrary: fc
            .tuple(objectValue(w, bodySchema), fc.string({ minLength: 1, maxLength: 12 }), hostileValue)
            .map(([o, k, v]) => ({ text: toJson({ ...o, [`x_${k}`]: v }) })),
        },
        { weight: 1, arbitrary: hostileValue.map((v) => ({ text: toJson(v) })) },
        {
          weight: 1,
          arbitrary: fc.constantFrom(
            { text: '{"a":' },
            { text: '{"a":1,}' },
            { text: 'null' },
            { text: '' },
            { text: deepText(5000) },
            { text: `{"x":"${'y'.repeat(1_100_000)}"}` },
            { text: '{"local_part":"a"}', type: 'text/plain' },
            { text: 'a=1&b=2', type: 'application/x-www-form-urlencoded' },
            { text: '{"a":1}', type: 'application/json; charset=latin-9' },
          ),
        },
      )
    : fc.constant({});
  const authArb = fc.constantFrom('valid', 'valid', 'valid', 'valid', 'valid', 'valid', 'none', 'garbage');
  const passwordArb = fc.constantFrom('keep', 'keep', 'keep', 'keep', 'none', 'wrong', 'huge');
  return fc.record({ path: pathArb, query: queryArb, body: bodyArb, auth: authArb, password: passwordArb });
}

/** A generated request (what fast-check prints for a counterexample). */
type Generated = ReturnType<typeof requestArb> extends fc.Arbitrary<infer T> ? T : never;

/** Path, headers (credentials looked up now: logout gets a fresh token) and body of a generated request. */
async function materialise(
  w: FaultWorld,
  service: Service,
  method: string,
  template: string,
  op: DocOperation,
  r: Generated,
): Promise<FuzzRequest> {
  const headers: Record<string, string> = {};
  if (r.auth === 'valid') Object.assign(headers, await credentials(w, service, method, template, op));
  if (r.auth === 'garbage') headers.authorization = 'Bearer ispi_1_garbage';
  if (headers['x-mailbox-password'] !== undefined) {
    if (r.password === 'none') delete headers['x-mailbox-password'];
    if (r.password === 'wrong') headers['x-mailbox-password'] = 'wrong password';
    if (r.password === 'huge') headers['x-mailbox-password'] = 'p'.repeat(8192);
  }
  const body = method !== 'get' && method !== 'head' ? r.body.text : undefined;
  if (body !== undefined) headers['content-type'] = r.body.type ?? 'application/json';
  return { path: r.path + r.query, headers, ...(body !== undefined ? { body } : {}) };
}

/** Checks one answer; returns a description of what is wrong, or null. */
function problemOf(service: Service, op: DocOperation, status: number, headers: Headers, text: string): string | null {
  if (status >= 500) return `5xx: ${status} ${text.slice(0, 300)}`;
  if (!(String(status) in op.responses) && !GENERIC.includes(status))
    return `undocumented status ${status}: ${text.slice(0, 200)}`;
  if (!headers.get('x-request-id')) return 'no X-Request-Id';
  if (status === 204) return text === '' ? null : 'a 204 with a body';
  if (!/^application\/json/.test(headers.get('content-type') ?? '')) return `not JSON: ${headers.get('content-type')}`;
  let body: Record<string, unknown>;
  try {
    body = JSON.parse(text);
  } catch {
    return `unparsable JSON: ${text.slice(0, 200)}`;
  }
  if (status < 400) return null;
  if (service === 'web' && (typeof body.message !== 'string' || typeof body.code !== 'string'))
    return `not the web error body: ${text.slice(0, 200)}`;
  if (service === 'mail' && (body.ok !== false || typeof body.error !== 'string' || typeof body.message !== 'string'))
    return `not the Mailbox API error body: ${text.slice(0, 200)}`;
  return null;
}

const docs: Record<Service, OpenApiDocument> = {
  web: buildOpenApi(webRoutes, webApiInfo('http://127.0.0.1'), { tagDescriptions: webTagDescriptions }),
  mail: buildMailOpenApi(mailRoutes, 'http://mail.example.test'),
};

describe('fuzzer (issue 7 item 7): every operation of both OpenAPI documents, never a 5xx', function () {
  this.timeout(120_000);
  let w: FaultWorld;
  let sent = 0;
  let started = 0;

  before(async () => {
    w = await faultWorld({ own: true });
    started = Date.now();
    // the documents fuzzed here are the ones the apps serve
    for (const [service, app] of [
      ['web', w.web],
      ['mail', w.mail],
    ] as const) {
      const served = (await app.request('GET', '/openapi.json')).body as OpenApiDocument;
      expect(served.paths).to.deep.equal(JSON.parse(JSON.stringify(docs[service].paths)));
    }
  });

  after(() => {
    const s = ((Date.now() - started) / 1000).toFixed(1);
    console.log(`      fuzzer: ${sent} requests over ${operationCount} operations in ${s} s (seed ${SEED})`);
  });

  let operationCount = 0;
  let index = 0;
  for (const service of ['web', 'mail'] as const) {
    for (const [template, item] of Object.entries(docs[service].paths)) {
      for (const [method, op] of Object.entries(item) as [string, DocOperation][]) {
        operationCount++;
        const seed = SEED + index++;
        it(`${service} ${method.toUpperCase()} ${template}: ${RUNS} requests, documented, JSON, no 5xx`, async () => {
          const app = service === 'web' ? w.web : w.mail;
          await fc.assert(
            fc.asyncProperty(requestArb(w, service, method, template, op), async (generated) => {
              const req = await materialise(w, service, method, template, op, generated);
              sent++;
              const res = await fetch(app.url + req.path, {
                method: method.toUpperCase(),
                headers: { accept: 'application/json', ...req.headers },
                body: req.body,
                redirect: 'manual',
              });
              const text = await res.text();
              const problem = problemOf(service, op, res.status, res.headers, text);
              if (problem) throw new Error(`${method.toUpperCase()} ${req.path.slice(0, 200)}: ${problem}`);
            }),
            { seed, numRuns: RUNS, endOnFailure: true },
          );
        });
      }
    }
  }
});
