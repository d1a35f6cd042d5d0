import { expect } from 'chai';
import { execa } from 'execa';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const DEPCRUISE = path.join(ROOT, 'node_modules/.bin/depcruise');

/**
 * A tiny tree with the repository's layout: `.js` specifiers that resolve to `.ts` files (nodenext), one good
 * and one wrong arrow per rule. Stub files only need to exist.
 */
const TREE: Record<string, string> = {
  'tsconfig.json': JSON.stringify({
    compilerOptions: { target: 'es2022', module: 'nodenext', moduleResolution: 'nodenext', strict: true },
    include: ['api', 'db', 'jobs', 'lib', 'workers'],
  }),
  'api/errors.ts': 'export class AppError extends Error {}\n',
  'api/http/route.ts': 'export const route = 1;\n',
  'api/middleware/auth.ts': 'export const auth = 1;\n',
  'api/mail/middleware/key.ts': 'export const key = 1;\n',
  'api/tickets/sla.ts': 'export const dueDates = 1;\n',
  'api/tickets/routes.ts': 'export const ticketRoutes = [];\n',
  'api/tickets/service.ts': "import { auth } from '../middleware/auth.js';\nexport const svc = auth;\n",
  'api/mail/keys/service.ts': "import { key } from '../../mail/middleware/key.js';\nexport const keys = key;\n",
  'api/tenants/service.ts': "import { AppError } from '../errors.js';\nexport const tenants = AppError;\n",
  'jobs/good.ts':
    "import { dueDates } from '../api/tickets/sla.js';\nimport { svc } from '../api/tickets/service.js';\n",
  'jobs/planted.ts': "import { AppError } from '../api/errors.js';\nexport const e = AppError;\n",
  'jobs/routes-user.ts': "import { ticketRoutes } from '../api/tickets/routes.js';\nexport const r = ticketRoutes;\n",
  'jobs/missing.ts': "import { nothing } from './not-there.js';\nexport const n = nothing;\n",
  'workers/main.ts': "import { e } from '../jobs/planted.js';\nimport type { route } from '../api/http/route.js';\n",
  'db/seeds/demo.ts':
    "import { tenants } from '../../api/tenants/service.js';\nimport { route } from '../../api/http/route.js';\n",
  'lib/util.ts': "import { svc } from '../api/tickets/service.js';\nexport const u = svc;\n",
};

interface Violation {
  from: string;
  to: string;
  rule: { name: string; severity: string };
}

describe('import rules (.dependency-cruiser.cjs, npm run deps:check)', function () {
  this.timeout(60_000);
  let dir: string;
  let violations: Violation[];
  let exitCode: number | undefined;

  before(async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'isp-depcruise-'));
    for (const [file, text] of Object.entries(TREE)) {
      await fs.mkdir(path.dirname(path.join(dir, file)), { recursive: true });
      await fs.writeFile(path.join(dir, file), text);
    }
    const args = ['api', 'db', 'jobs', 'lib', 'workers', '--config', path.join(ROOT, '.dependency-cruiser.cjs')];
    // The same `err` output and exit code as `npm run deps:check`: one line per violation,
    // "  error jobs-not-to-http: jobs/planted.ts → api/errors.ts".
    const r = await execa(DEPCRUISE, args, { cwd: dir, reject: false, all: true });
    exitCode = r.exitCode;
    violations = [...r.all.matchAll(/^\s*(error|warn|info) ([\w-]+): (\S+) → (\S+)$/gmu)].map((m) => ({
      rule: { severity: m[1], name: m[2] },
      from: m[3],
      to: m[4],
    }));
    expect(violations, r.all).to.have.length.greaterThan(0);
  });

  after(async () => {
    if (dir) await fs.rm(dir, { recursive: true, force: true });
  });

  const found = (rule: string, from: string, to: string) =>
    violations.some((v) => v.rule.name === rule && v.from === from && v.to === to);
  const flagged = (from: string, to: string) => violations.some((v) => v.from === from && v.to === to);

  it('fails (non-zero exit) when there is a wrong arrow', () => {
    expect(exitCode).to.be.greaterThan(0);
  });

  it('reports jobs -> api/errors.ts as jobs-not-to-http', () => {
    expect(found('jobs-not-to-http', 'jobs/planted.ts', 'api/errors.ts')).to.equal(true);
  });

  it('reports jobs -> a module route table, workers -> api/http (type-only too), seeds -> api/http', () => {
    expect(found('jobs-not-to-http', 'jobs/routes-user.ts', 'api/tickets/routes.ts')).to.equal(true);
    expect(found('jobs-not-to-http', 'workers/main.ts', 'api/http/route.ts')).to.equal(true);
    expect(found('jobs-not-to-http', 'db/seeds/demo.ts', 'api/http/route.ts')).to.equal(true);
  });

  it('allows jobs and seeds -> services and domain modules (resolving .js specifiers to .ts files)', () => {
    expect(flagged('jobs/good.ts', 'api/tickets/sla.ts')).to.equal(false);
    expect(flagged('jobs/good.ts', 'api/tickets/service.ts')).to.equal(false);
    expect(flagged('db/seeds/demo.ts', 'api/tenants/service.ts')).to.equal(false);
    expect(flagged('workers/main.ts', 'jobs/planted.ts')).to.equal(false);
  });

  it('reports services -> middleware (web and mail) as services-not-to-middleware', () => {
    expect(found('services-not-to-middleware', 'api/tickets/service.ts', 'api/middleware/auth.ts')).to.equal(true);
    expect(found('services-not-to-middleware', 'api/mail/keys/service.ts', 'api/mail/middleware/key.ts')).to.equal(
      true,
    );
    expect(flagged('api/tenants/service.ts', 'api/errors.ts')).to.equal(false);
  });

  it('reports lib -> api as lower-layers-not-up and an unresolvable import as not-to-unresolvable', () => {
    expect(found('lower-layers-not-up', 'lib/util.ts', 'api/tickets/service.ts')).to.equal(true);
    expect(found('not-to-unresolvable', 'jobs/missing.ts', './not-there.js')).to.equal(true);
  });
});
