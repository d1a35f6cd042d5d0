/**
 * Baseline servers for bench/external-list.ts: bare node:http + pg over the same customers table,
 * no framework, no auth, no rate limit, no log line, no read shape (rows go out as pg returns
 * them). Mode a: the page by an index scan, no count (the limit). Mode b: the naive way, the same
 * plus count(*), with OFFSET.
 *
 * Usage: `tsx bench/baseline-server.ts <a|b> <tenant id> [external|admin]`, with PORT and
 * DATABASE_URL in the environment (read through lib/config.ts). `admin` (bench/admin-customers.ts)
 * selects the admin list's columns (CUSTOMER_ADMIN_COLUMNS) and joins the NAS too, as GET
 * /api/customers does.
 *
 * The page statement does the same SQL work as the app's first page (api/external/customer-list.ts):
 * the same select list (CUSTOMER_COLUMNS) and joins (package of the same tenant, the newest active
 * ONU by CUSTOMER_ONU_JOIN), newest first, and like the app it runs as a named prepared statement
 * with a literal LIMIT, so PostgreSQL keeps a generic plan. The only SQL the app runs on top is its
 * token lookup and the counters subquery for `total`.
 */
import http from 'node:http';
import pg from 'pg';
import { CUSTOMER_COLUMNS, CUSTOMER_ONU_JOIN } from '../api/external/shapes.js';
import { CUSTOMER_ADMIN_COLUMNS, CUSTOMER_NAS_JOIN } from '../api/customers/list.js';
import { loadConfig } from '../lib/config.js';

const [mode = 'a', tenantArg, shape = 'external'] = process.argv.slice(2);
const admin = shape === 'admin';
const tenantId = Number(tenantArg);
const config = loadConfig();
const pool = new pg.Pool({ connectionString: config.databaseUrl, max: 10 });

function pageSql(byStatus: boolean, limit: number, offset: number): string {
  return `SELECT ${(admin ? CUSTOMER_ADMIN_COLUMNS : CUSTOMER_COLUMNS).join(', ')}
FROM customers c
LEFT JOIN packages p ON p.id = c.package_id AND p.tenant_id = c.tenant_id
${CUSTOMER_ONU_JOIN}${admin ? `\n${CUSTOMER_NAS_JOIN}` : ''}
WHERE c.tenant_id = $1${byStatus ? ' AND c.status = $2' : ''}
ORDER BY c.created_at DESC, c.id DESC
LIMIT ${limit} OFFSET ${offset}`;
}

const server = http.createServer(async (req, res) => {
  try {
    const u = new URL(req.url ?? '/', 'http://x');
    const page = Math.max(1, Math.floor(Number(u.searchParams.get('page') ?? 1)) || 1);
    const perPage = Math.min(100, Math.max(1, Math.floor(Number(u.searchParams.get('per_page') ?? 15)) || 15));
    const status = u.searchParams.get('status');
    const params: unknown[] = status ? [tenantId, status] : [tenantId];
    const offset = (page - 1) * perPage;
    const name = `base_${status ? 's' : 'a'}_${perPage}_${offset}`;
    const rows = (await pool.query({ name, text: pageSql(!!status, perPage, offset), values: params })).rows;
    let total = -1;
    if (mode === 'b') {
      const count = `SELECT count(*) AS n FROM customers c WHERE c.tenant_id = $1${status ? ' AND c.status = $2' : ''}`;
      total = Number(
        (await pool.query({ name: `count_${status ? 's' : 'a'}`, text: count, values: params })).rows[0].n,
      );
    }
    const body = JSON.stringify({ current_page: page, per_page: perPage, total, data: rows });
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(body);
  } catch (e) {
    res.writeHead(500);
    res.end(String(e));
  }
});
server.listen(config.port, '127.0.0.1', () => process.send?.('ready'));
process.on('SIGTERM', () => {
  server.close();
  pool.end().then(() => process.exit(0));
});
