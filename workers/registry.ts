import type { Job, Processor } from 'bullmq';
import { fileURLToPath } from 'node:url';
import type { JobSchedulerDef, QueueName } from '../jobs/queues.js';
import * as invoiceOverdue from '../jobs/invoice-overdue.js';
import * as ticketSla from '../jobs/ticket-sla.js';
import * as mailboxCreate from '../jobs/mailbox-create.js';
import * as eventDispatch from '../jobs/event-dispatch.js';
import * as onuPoll from '../jobs/onu-poll.js';
import * as billingCycle from '../jobs/billing-cycle.js';
import * as customerNetwork from '../jobs/customer-network.js';
import * as imapSync from '../jobs/imap-sync.js';
import * as emailSend from '../jobs/email-send.js';
import * as wabotSend from '../jobs/wabot-send.js';
import * as wabotStatus from '../jobs/wabot-status.js';
import * as wabotWebhookRegister from '../jobs/wabot-webhook-register.js';
import * as apkRetention from '../jobs/apk-retention.js';
import * as apkBuild from '../jobs/apk-build.js';
import * as supplierImport from '../jobs/supplier-import.js';
import * as provisioningCheck from '../jobs/provisioning-check.js';
import * as tenantDb from '../jobs/tenant-db.js';
import * as provisioningRun from '../jobs/provisioning-run.js';
import * as customerMailbox from '../jobs/customer-mailbox.js';
import * as tenantDbIdBlocks from '../jobs/tenant-db-id-blocks.js';
import { jobDeps } from '../jobs/deps.js';

/**
 * How the worker process runs one queue (DESIGN.md §1, §3).
 * - processor: an in-process function `(job, token, signal) => result`, or a file path / URL of a
 *   sandboxed processor (workers/sandboxed/) for CPU-heavy or subprocess work.
 * - concurrency: jobs of this queue run in parallel per worker process (default 1).
 * - scheduler: the queue's cron, upserted when the worker starts (idempotent).
 */
export interface QueueRegistration {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  processor: Processor<any, any> | string | URL;
  concurrency?: number;
  scheduler?: JobSchedulerDef;
  /**
   * Stop this queue's running jobs as soon as the worker closes (their AbortSignal fires at once)
   * instead of near the end of the grace period: for jobs that cannot resume (apk-build).
   */
  abortOnShutdown?: boolean;
  /** Called after a job of the queue failed (any cause, including a crashed sandbox or too many stalls). */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- the job data type differs per queue
  onFailed?: (job: Job<any>, err: Error) => Promise<void>;
  /**
   * Options of a sandboxed processor's child process (BullMQ workerForkOptions): `execArgv` is
   * appended to the worker's own (e.g. `--max-old-space-size=256`), `env` replaces its environment.
   */
  fork?: { execArgv?: string[]; env?: NodeJS.ProcessEnv };
}

/**
 * Queue name -> how to run it. A module adds its queue with one line here. A queue of QUEUE_NAMES
 * without an entry (e.g. `mailbox-create` until the Mailbox API module registers its processor) is
 * skipped by the worker with a log line, not an error.
 */
export const registry: Partial<Record<QueueName, QueueRegistration>> = {
  'invoice-overdue': { processor: invoiceOverdue.process, concurrency: 1, scheduler: invoiceOverdue.scheduler },
  'ticket-sla': { processor: ticketSla.process, concurrency: 1, scheduler: ticketSla.scheduler },
  'mailbox-create': { processor: mailboxCreate.process, concurrency: 5 },
  'event-dispatch': { processor: eventDispatch.process, concurrency: 2, scheduler: eventDispatch.scheduler },
  'onu-poll': { processor: onuPoll.process, concurrency: 4, scheduler: onuPoll.scheduler },
  'billing-cycle': { processor: billingCycle.process, concurrency: 2, scheduler: billingCycle.scheduler },
  'customer-network': { processor: customerNetwork.process, concurrency: 4, scheduler: customerNetwork.scheduler },
  'imap-sync': { processor: imapSync.process, concurrency: 4, scheduler: imapSync.scheduler },
  'email-send': { processor: emailSend.process, concurrency: 4, scheduler: emailSend.scheduler },
  'wabot-send': { processor: wabotSend.process, concurrency: 10, scheduler: wabotSend.scheduler },
  'wabot-status': { processor: wabotStatus.process, concurrency: 4, scheduler: wabotStatus.scheduler },
  'wabot-webhook-register': { processor: wabotWebhookRegister.process, concurrency: 4 },
  'apk-retention': { processor: apkRetention.process, concurrency: 1, scheduler: apkRetention.scheduler },
  'apk-build': {
    processor: fileURLToPath(new URL('./sandboxed/apk-build.ts', import.meta.url)),
    concurrency: 1,
    abortOnShutdown: true,
    onFailed: async (job, err) => {
      await apkBuild.failOrphanedBuild(jobDeps().knex, job.data ?? {}, err.message);
    },
  },
  'supplier-import': {
    processor: fileURLToPath(new URL('./sandboxed/supplier-import.ts', import.meta.url)),
    concurrency: 2,
    fork: { execArgv: supplierImport.parseExecArgv() },
    onFailed: (job, err) => supplierImport.recordFailure(jobDeps(), job, err),
  },
  'provisioning-check': { processor: provisioningCheck.process, concurrency: 2 },
  'tenant-db': {
    processor: tenantDb.process,
    concurrency: 2,
    onFailed: (job, err) => tenantDb.recordRunFailure(jobDeps().knex, job, err),
  },
  provisioning: { processor: provisioningRun.process, concurrency: 2 },
  'customer-mailbox': { processor: customerMailbox.process, concurrency: 4 },
  'tenant-db-id-blocks': { processor: tenantDbIdBlocks.process, concurrency: 1, scheduler: tenantDbIdBlocks.scheduler },
};
