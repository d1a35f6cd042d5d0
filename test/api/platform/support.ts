import { randomBytes } from 'node:crypto';
import { PASSWORD } from '../../helpers/fixtures.js';
import { env } from '../../helpers/env.js';
import { createPlatformAdmin } from '../../../api/tenants/service.js';
import { login } from '../../../api/auth/service.js';

/** Logs a new platform admin in (issue 13: /api/platform/*). */
export async function platformAdminToken(): Promise<{ id: number; token: string }> {
  const email = `ops-${randomBytes(4).toString('hex')}@example.test`;
  const u = await createPlatformAdmin(env.knex, { email, password: PASSWORD });
  const { token } = await login(env.knex, { email, password: PASSWORD });
  return { id: u.id, token };
}
