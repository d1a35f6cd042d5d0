import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import type { TestApp, TestResponse } from '../../helpers/http.js';
import { env } from '../../helpers/env.js';

/** Helpers of the keystore API tests (issue 12 item 8). */

/** A keystore made by keytool itself (the way a tenant would bring one). */
export async function makeKeystore(opts: {
  type: 'JKS' | 'PKCS12';
  storePassword: string;
  alias: string;
  keyPassword?: string;
  cn?: string;
}): Promise<Buffer> {
  const dir = await mkdtemp(path.join(tmpdir(), 'apk-ks-'));
  try {
    const file = path.join(dir, 'k');
    await execa(
      'keytool',
      [
        '-genkeypair',
        '-alias',
        opts.alias,
        '-keyalg',
        'RSA',
        '-keysize',
        '2048',
        '-validity',
        '3650',
        '-dname',
        `CN=${opts.cn ?? 'Tenant Upload'}`,
        '-keystore',
        file,
        '-storetype',
        opts.type,
        '-storepass:env',
        'SP',
        '-keypass:env',
        'KP',
      ],
      { env: { SP: opts.storePassword, KP: opts.keyPassword ?? opts.storePassword } },
    );
    return await readFile(file);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** keytool's own `SHA256:` line of an entry of a keystore given as bytes. */
export async function keytoolSha256(bytes: Buffer, type: string, password: string, alias: string): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), 'apk-ks-'));
  try {
    const file = path.join(dir, 'k');
    await writeFile(file, bytes, { mode: 0o600 });
    const r = await execa(
      'keytool',
      ['-list', '-v', '-alias', alias, '-keystore', file, '-storetype', type, '-storepass:env', 'P'],
      { env: { P: password } },
    );
    return /SHA256: ([0-9A-F:]+)/.exec(r.stdout)![1];
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** POSTs a multipart upload to the keystore route. */
export async function uploadForm(
  app: TestApp,
  token: string,
  appType: string,
  fields: Record<string, string>,
  file?: Buffer,
): Promise<TestResponse> {
  const form = new FormData();
  for (const [k, v] of Object.entries(fields)) form.append(k, v);
  if (file) form.append('file', new Blob([new Uint8Array(file)]), 'release.keystore');
  const res = await fetch(`${app.url}/api/android-apk/configs/${appType}/keystore`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, accept: 'application/json' },
    body: form,
  });
  const text = await res.text();
  let body: any;
  try {
    body = text ? JSON.parse(text) : null;
  } catch {
    body = null;
  }
  return { status: res.status, body, headers: res.headers, text };
}

/** Every row of every table and every Redis key and value, as text (where a leaked secret would show). */
export async function dumpStores(): Promise<{ db: string; redis: string }> {
  const tables: string[] = (
    await env.knex.raw(
      `SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' AND table_type = 'BASE TABLE' ORDER BY 1`,
    )
  ).rows.map((r: { table_name: string }) => r.table_name);
  const parts: string[] = [];
  for (const t of tables) {
    const { rows } = await env.knex.raw('SELECT row_to_json(x)::text AS j FROM ?? x', [t]);
    parts.push(`${t}:`, ...rows.map((r: { j: string }) => r.j));
  }
  const out: string[] = [];
  let cursor = '0';
  do {
    const [next, keys] = await env.redis.scan(cursor, 'COUNT', 1000);
    cursor = next;
    for (const k of keys) {
      const type = await env.redis.type(k);
      out.push(k);
      if (type === 'string') out.push(String(await env.redis.get(k)));
      else if (type === 'hash') out.push(JSON.stringify(await env.redis.hgetall(k)));
      else if (type === 'list') out.push(JSON.stringify(await env.redis.lrange(k, 0, -1)));
      else if (type === 'set') out.push(JSON.stringify(await env.redis.smembers(k)));
      else if (type === 'zset') out.push(JSON.stringify(await env.redis.zrange(k, '0', '-1')));
      else if (type === 'stream') out.push(JSON.stringify(await env.redis.xrange(k, '-', '+')));
    }
  } while (cursor !== '0');
  return { db: parts.join('\n'), redis: out.join('\n') };
}

/** The forms a leaked secret could take (plain, URL-encoded, base64, JSON-escaped). */
export function secretForms(secret: string): string[] {
  return [
    ...new Set([
      secret,
      encodeURIComponent(secret),
      Buffer.from(secret).toString('base64'),
      JSON.stringify(secret).slice(1, -1),
    ]),
  ];
}
