import { randomBytes } from 'node:crypto';
import {
  DnsProviderError,
  type DnsProvider,
  type DnsRecord,
  type ProvisioningCredentials,
  type ProvisioningCredentialSource,
  type ProvisioningLock,
} from '../../../jobs/provisioning/contract.js';
import { PanelError, type CreateMailboxInput, type MailPanel } from '../../../jobs/adapters/mail-panel/types.js';
import type { ProvisioningRuntime } from '../../../jobs/provisioning/runtime.js';

/** Sentinel secrets of the runs' fake credentials (issue 13: never in the database, Redis, logs, answers). */
export const RUN_TOKEN = `cf_runs_sentinel_${randomBytes(5).toString('hex')}`;
export const RUN_PANEL_PW = `panel_runs_sentinel_${randomBytes(5).toString('hex')}`;

/** An in-memory Cloudflare zone with failure injection per operation (issue 13 item 8 tests). */
export class FakeDns implements DnsProvider {
  records: DnsRecord[] = [];
  calls: string[] = [];
  /** errors thrown by the next calls of an operation, in order */
  failures: Partial<Record<'listRecords' | 'createRecord' | 'deleteRecord' | 'zone', Error[]>> = {};
  private next = 1;
  constructor(readonly zoneName: string) {}

  private maybeFail(op: keyof FakeDns['failures']) {
    this.calls.push(op);
    const e = this.failures[op]?.shift();
    if (e) throw e;
  }
  async verifyToken() {
    return { ok: true, message: 'active' };
  }
  async zone() {
    this.maybeFail('zone');
    return { name: this.zoneName, status: 'active' };
  }
  async listRecords(q: { name: string; type?: string }) {
    this.maybeFail('listRecords');
    return this.records.filter((r) => r.name === q.name && (!q.type || r.type === q.type)).map((r) => ({ ...r }));
  }
  async createRecord(r: Omit<DnsRecord, 'id'>) {
    this.maybeFail('createRecord');
    const rec = { ...r, id: `rec${this.next++}` };
    this.records.push(rec);
    return { ...rec };
  }
  async deleteRecord(id: string) {
    this.maybeFail('deleteRecord');
    this.records = this.records.filter((r) => r.id !== id);
  }
  /** A record made by someone else (no marker). */
  foreign(name: string, type = 'A', content = '198.51.100.9'): DnsRecord {
    const rec = { id: `ext${this.next++}`, name, type, content, proxied: false, comment: null };
    this.records.push(rec);
    return rec;
  }
}

/** 502 (retry) and 403 (permanent) as the Cloudflare adapter throws them. */
export const dns502 = () => new DnsProviderError('retry', 'Cloudflare create record: HTTP 502', 502);
export const dns403 = () =>
  new DnsProviderError('permanent', 'Cloudflare create record: HTTP 403 (10000: Authentication error)', 403);

/** An in-memory mail panel with failure injection. */
export class FakePanel implements MailPanel {
  boxes = new Map<string, CreateMailboxInput>();
  creates = 0;
  failures: Error[] = [];
  /** when set, createMailbox waits for it (a slow panel without a timing window) */
  gate: Promise<void> | null = null;
  async createMailbox(input: CreateMailboxInput) {
    this.creates++;
    if (this.gate) await this.gate;
    const e = this.failures.shift();
    if (e) throw e;
    const key = `${input.local_part}@${input.domain}`;
    if (this.boxes.has(key)) throw new PanelError('exists', 'exists');
    this.boxes.set(key, input);
  }
  async mailboxExists(domain: string, local: string) {
    return this.boxes.has(`${local}@${domain}`);
  }
  async testConnection() {}
}

/** A credentials source over fixed credentials and a switchable lock. */
export function fakeSource(lock: ProvisioningLock = { locked: false, reasons: [] }) {
  const state = { lock };
  const creds: ProvisioningCredentials = {
    enabled: true,
    backupReady: true,
    cloudflare: { apiToken: RUN_TOKEN, zoneId: 'z'.repeat(32) },
    mailPanel: {
      type: 'cpanel',
      host: 'panel.example.net',
      port: 2083,
      user: 'isp',
      password: RUN_PANEL_PW,
      ssl: true,
    },
    tenantDb: null,
    storage: null,
  };
  const source: ProvisioningCredentialSource & { state: typeof state } = {
    state,
    load: async () => structuredClone(creds),
    lock: async () => state.lock,
  };
  return source;
}

/** The runtime of a test: the fakes. */
export function fakeRuntime(
  dns: FakeDns,
  panel: FakePanel,
  source = fakeSource(),
): ProvisioningRuntime & {
  source: ReturnType<typeof fakeSource>;
} {
  return { source, dns: () => dns, panel: () => panel };
}
