import type { Knex } from 'knex';
import type { Redis } from 'ioredis';
import type Koa from 'koa';
import type { Logger } from '../lib/logger.js';
import type { TenantScope } from '../db/tenant-scope.js';
import type { Queues } from '../jobs/queues.js';
import type { Storage } from '../lib/storage/index.js';

/** What createApp needs; server.ts builds it, tests build their own. Nothing here connects at import. */
export interface AppDeps {
  knex: Knex;
  redis: Redis;
  logger: Logger;
  /** Producer side of the job queues (enableOfflineQueue: false). */
  queues: Queues;
  /**
   * The file storage driver (lib/storage; DESIGN.md §10 "files"). server.ts always sets it; an app
   * built without one answers its upload and download routes with 500 SERVER_ERROR.
   */
  storage?: Storage;
  config: {
    publicBaseUrl: string;
    /** Per-token rate limit of the external API (default 600 a minute). */
    rateLimit?: { points: number; durationSeconds: number };
    /** Failed-login throttle of POST /api/auth/login (default 10 per IP + e-mail per 15 minutes). */
    loginThrottle?: import('../lib/login-throttle.js').LoginThrottleOptions;
    /** Failed sign-ins per IP across all e-mails per 15 minutes, per sign-in form (LOGIN_IP_LIMIT, default 20). */
    loginIpLimit?: number;
    /** Trust X-Forwarded-* from a reverse proxy (TRUST_PROXY; lib/config.ts). */
    trustProxy?: boolean;
    /** Secure cookies (true behind https). */
    secureCookies?: boolean;
    /** APP_KEY (32 bytes): seals write-only credentials at rest (OLT and NAS credentials; lib/crypto.ts). */
    appKey?: Buffer;
    /** How long POST /api/communications/{id}/reply-email waits for the send, in ms (default 30000; issue 9 item 5). */
    emailReplyWaitMs?: number;
    /** How long POST /api/auth/email-settings/test-incoming waits for its job, in ms (default 30 s; tests use less). */
    emailTestWaitMs?: number;
    /** How long POST /api/wabot/test waits for its check or send, in ms (default 15000; issue 10 item 4). */
    wabotTestWaitMs?: number;
    /**
     * The app builder (issue 12): the toolchain health looks at and the keystore source of the
     * release-build check. Absent: stub toolchain, no release keystores.
     */
    apk?: import('./android-apk/routes.js').ApkApiOptions;
    /** The supplier import (issue 16 item 6): how long its routes wait for the job (default 20000 ms), their clock. */
    supplierImport?: { waitMs?: number; clock?: import('../lib/clock.js').Clock };
    /** How long POST .../provisioning/credentials/test/{provider} waits, in ms (default 20000; issue 13 item 5). */
    provisioningCheckWaitMs?: number;
    /**
     * Provisioning runs and customer mailboxes (issue 13 items 6-9): PLATFORM_MAIL_DOMAIN,
     * PROVISIONING_DNS_TARGET, the runtime (credentials source, DNS and panel factories; tests pass
     * fakes), a step's first backoff in ms (default 2000) and the customer mailbox wait (default 30 s).
     */
    /** Issue 15's tenant-db evidence and approvals: the clock of the window rules (default the system clock). */
    tenantDbClock?: import('../lib/clock.js').Clock;
    provisioning?: import('./platform/runs/request.js').RunsConfig & {
      runtime?: import('../jobs/provisioning/runtime.js').ProvisioningRuntime;
      backoffMs?: number;
      customerMailboxWaitMs?: number;
    };
    /** Pilot logins of tenant databases (issue 15 items 8, 9): the clock pilot tokens expire by (default system). */
    tenantDbPilot?: { clock?: import('../lib/clock.js').Clock };
  };
}

/** The active tenant as the middleware loads it. */
export interface TenantInfo {
  id: number;
  slug: string;
  name: string;
  demo_mode: boolean;
  modules: string[];
  settings: Record<string, unknown>;
  /** IANA time zone (tenants.timezone; DESIGN.md §10). */
  timezone?: string;
}

/** The authenticated caller. */
export interface AuthInfo {
  /** `pilot`: a tenant database's pilot token (issue 15 item 9), only on the smoke routes. */
  kind: 'integration' | 'login' | 'board' | 'pilot';
  tokenId: number;
  userId: number | null;
  tenantId: number | null;
  /** Integration tokens: read | read_write. */
  access: 'read' | 'read_write' | null;
  abilities: string[];
  /** Login tokens: the user's role names and permission names. */
  roles: string[];
  permissions: string[];
  isPlatformAdmin: boolean;
  expiresAt: Date | null;
}

/** ctx.state after the route's middleware ran. */
export interface AppState {
  requestId: string;
  auth?: AuthInfo;
  tenant?: TenantInfo;
  scope?: TenantScope;
  params: Record<string, unknown>;
  query: Record<string, unknown>;
  body: Record<string, unknown>;
}

/** The Koa context of the web service: typed ctx.state plus ctx.deps (AppDeps). */
export type AppContext = Koa.ParameterizedContext<AppState> & { deps: AppDeps };
