import { createHash } from 'node:crypto';
import type { Knex } from 'knex';
import {
  NetworkAuthError,
  NetworkServerError,
  NetworkTimeoutError,
  UnknownProfileError,
  type NasTarget,
  type NetworkAdapter,
  type NetworkCallOptions,
  type SessionSpec,
} from './types.js';

/**
 * Driver `fake` (issue 8 item 2): a NAS whose sessions live in the table `network_fake_sessions`
 * (tenant_id, nas_id, username, state, profile, service_type, mac_address, password_sha256, version,
 * updated_at), for tests, the demo and development. It never needs credentials and keeps only a
 * SHA-256 of a password (so a test can tell the right one arrived without storing it).
 *
 * Failures are injected per NAS in `network_fake_failures` (tenant_id, nas_id, kind, remaining):
 * every call to that NAS consumes one (`remaining` counts down; null fails every call) and throws
 * by kind: `timeout` NetworkTimeoutError, `server_error` NetworkServerError (both retried),
 * `auth` NetworkAuthError, `unknown_profile` UnknownProfileError (both give up). A session in an
 * older version than the one stored is left alone (calls are idempotent and ordered by version).
 */

/** The failure kinds of network_fake_failures.kind. */
export const FAKE_FAILURE_KINDS = ['timeout', 'server_error', 'auth', 'unknown_profile'] as const;
/** One of FAKE_FAILURE_KINDS. */
export type FakeFailureKind = (typeof FAKE_FAILURE_KINDS)[number];

/** Throws the injected failure of this NAS, if one is left. */
async function injected(knex: Knex, nas: NasTarget): Promise<void> {
  const { rows } = await knex.raw(
    `UPDATE network_fake_failures f SET remaining = CASE WHEN f.remaining IS NULL THEN NULL ELSE f.remaining - 1 END
     WHERE f.nas_id = ? AND f.tenant_id = ? AND (f.remaining IS NULL OR f.remaining > 0)
     RETURNING f.kind`,
    [nas.id, nas.tenant_id],
  );
  const kind = (rows[0] as { kind: FakeFailureKind } | undefined)?.kind;
  if (kind === 'timeout') throw new NetworkTimeoutError();
  if (kind === 'server_error') throw new NetworkServerError();
  if (kind === 'auth') throw new NetworkAuthError();
  if (kind === 'unknown_profile') throw new UnknownProfileError();
}

/**
 * The fake driver, storing sessions through `knex` (its own connection: like a real router, what it
 * holds does not depend on the job's transaction).
 */
export function createFakeNetworkAdapter(knex: Knex): NetworkAdapter {
  return {
    driver: 'fake',
    async apply(nas: NasTarget, s: SessionSpec, opts: NetworkCallOptions) {
      opts.signal?.throwIfAborted();
      await injected(knex, nas);
      const digest = s.password === null ? null : createHash('sha256').update(s.password).digest('hex');
      await knex.raw(
        `INSERT INTO network_fake_sessions AS x
           (tenant_id, nas_id, username, state, profile, service_type, mac_address, password_sha256, version, updated_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
         ON CONFLICT (nas_id, username) DO UPDATE SET state = EXCLUDED.state, profile = EXCLUDED.profile,
           service_type = EXCLUDED.service_type, mac_address = EXCLUDED.mac_address,
           password_sha256 = EXCLUDED.password_sha256, version = EXCLUDED.version, updated_at = EXCLUDED.updated_at
         WHERE x.version <= EXCLUDED.version`,
        [
          nas.tenant_id,
          nas.id,
          s.username,
          s.state,
          s.profile,
          s.service_type,
          s.mac_address,
          digest,
          s.version,
          opts.now,
        ],
      );
    },
    async remove(nas: NasTarget, username: string, opts: NetworkCallOptions) {
      opts.signal?.throwIfAborted();
      await injected(knex, nas);
      await knex('network_fake_sessions').where({ tenant_id: nas.tenant_id, nas_id: nas.id, username }).delete();
    },
  };
}
