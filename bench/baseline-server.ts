/**
 * Baseline servers for bench/external-list.ts: bare node:http + pg over the same customers table,
 * no framework, no auth. MODE=a: the page of 100 rows by an index scan, no count (the limit).
 * MODE=b: the naive way, the same plus count(*) and OFFSET. Same joins and row shape as the API.
 */
import http from 'node:http';
import pg from 'pg';

const mode = process.env.MODE ?? 'a';
const tenantId = Number(process.env.TENANT_ID);
const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 10 });

const COLS = `c.id, c.code, c.name, c.email, c.phone, c.status, c.service_type, c.customer_tier, c.address, c.latitude, c.longitude,
  c.billing_cycle, c.billing_day, c.mac_address, c.created_at, c.updated_at, p.id AS package_id, p.name AS package_name,
  o.id AS onu_id, o.serial_number AS onu_serial, o.status AS onu_status`;

const server = http.createServer(async (req, res) => {
  try {
    const u = new URL(req.url ?? '/', 'http://x');
    const page = Math.max(1, Number(u.searchParams.get('page') ?? 1));
    const perPage = Math.min(100, Math.max(1, Number(u.searchParams.get('per_page') ?? 15)));
    const status = u.searchParams.get('status');
    const params: unknown[] = [tenantId];
    let where = 'c.tenant_id = $1';
    if (status) { params.push(status); where += ` AND c.status = $${params.length}`; }
    const sql = `SELECT ${COLS} FROM customers c LEFT JOIN packages p ON p.id = c.package_id
      LEFT JOIN LATERAL (SELECT id, serial_number, status FROM onus WHERE onus.customer_id = c.id AND onus.tenant_id = c.tenant_id ORDER BY id LIMIT 1) o ON true
      WHERE ${where} ORDER BY c.created_at DESC, c.id DESC LIMIT ${perPage} OFFSET ${(page - 1) * perPage}`;
    const rows = (await pool.query(sql, params)).rows;
    let total = -1;
    if (mode === 'b') total = Number((await pool.query(`SELECT count(*) FROM customers c WHERE ${where}`, params)).rows[0].count);
    const body = JSON.stringify({ current_page: page, per_page: perPage, total, data: rows });
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(body);
  } catch (e) {
    res.writeHead(500);
    res.end(String(e));
  }
});
server.listen(Number(process.env.PORT), '127.0.0.1', () => process.send?.('ready'));
process.on('SIGTERM', () => { server.close(); pool.end().then(() => process.exit(0)); });
