import type Koa from 'koa';
import type { Job } from 'bullmq';
import type { Knex } from 'knex';
import type { Redis } from 'ioredis';
import type { Logger } from '../../lib/logger.js';
import type { Queues } from '../../jobs/queues.js';
import type { MailboxClient } from '../../jobs/adapters/mailbox-client/index.js';
import type { ApiKeyInfo } from './keys/service.js';

/**
 * What createMailApp needs (issue 3 shared contract). server.ts builds it from the environment;
 * tests build their own (a fake MailboxClient, a small rate limit, a tiny createWaitMs).
 * Nothing here connects at import.
 */
export interface MailDeps {
  knex: Knex;
  /** Redis for the per-key rate limit; its options also open the QueueEvents connection. */
  redis: Redis;
  logger: Logger;
  /** Producer side of the job queues (the `mailbox-create` queue). */
  queues: Queues;
  /** IMAP/SMTP client; the password lives in memory for the request only. */
  mailClient: MailboxClient;
  config: MailConfig;
}

/** Configuration of the Mailbox API service. */
export interface MailConfig {
  /** Origin the service announces (MAIL_BASE_URL), no trailing slash. */
  mailBaseUrl: string;
  /** 32-byte APP_KEY: seals the initial password of a mailbox being created. */
  appKey: Buffer;
  /** Per-key rate limit (default 120 requests per 60 s). */
  rateLimit?: { points: number; durationSeconds: number };
  /** How long POST .../mailboxes waits for the job before answering 202, in ms (default 30000). */
  createWaitMs?: number;
  /** Trust X-Forwarded-* from a reverse proxy (TRUST_PROXY; lib/config.ts). */
  trustProxy?: boolean;
  /** Redis key prefix of the rate-limit counters (default `rl:mailkey`; tests isolate with their own). */
  rateLimitPrefix?: string;
  /** Failed dashboard sign-ins per IP across all e-mails per 15 minutes (LOGIN_IP_LIMIT, default 20). */
  loginIpLimit?: number;
  /** Dashboard sign-in throttle per IP + e-mail (default 5 per 15 minutes; tests isolate with their own prefix). */
  loginThrottle?: import('../../lib/login-throttle.js').LoginThrottleOptions;
}

/** A registered mailbox as the routes resolve it from the path (row of mail_mailboxes + its domain). */
export interface ResolvedMailbox {
  id: number;
  email: string;
  domain_id: number;
  domain: string;
  imap: { host: string; port: number; security: 'ssl' | 'starttls' | 'none' };
  smtp: { host: string; port: number; security: 'ssl' | 'starttls' | 'none' };
}

/** A mail domain row as the create-mailbox route resolves it from the path. */
export interface ResolvedDomain {
  id: number;
  name: string;
  imap_host: string;
  imap_port: number;
  smtp_host: string;
  smtp_port: number;
  panel_type: string | null;
}

/** ctx.state of the Mailbox API. */
export interface MailState {
  requestId: string;
  /** The verified API key (protected routes). */
  key?: ApiKeyInfo;
  mailbox?: ResolvedMailbox;
  domain?: ResolvedDomain;
  /** The mailbox password of this request: memory only, never logged, never echoed. */
  mailboxPassword?: string;
  /**
   * Secrets seen in this request (mailbox password, new mailbox password). The error logger
   * scrubs them from anything it writes, as a second line of defence.
   */
  secrets: string[];
  params: Record<string, unknown>;
  query: Record<string, unknown>;
  body: Record<string, unknown>;
}

/** Per-app runtime objects shared by the requests (created by createMailApp, closed by its close()). */
export interface MailRuntime {
  /** Waits for a job of the mailbox-create queue (lazy QueueEvents on its own connection). */
  waitForJob(job: Job, ms: number): Promise<void>;
  close(): Promise<void>;
}

export type MailContext = Koa.ParameterizedContext<MailState> & { deps: MailDeps; mailRuntime: MailRuntime };
