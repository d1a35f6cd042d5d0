import { Model } from 'objection';

/** Status of an APK build (document 2 "Mobile app build" state rows; issue 12 item 5). */
export type ApkBuildStatus = 'queued' | 'running' | 'successful' | 'failed' | 'cancelled';

/**
 * Row of `apk_builds` (issue 12 items 5-7): one requested build of a tenant's app type.
 * Tenant-scoped: query it through TenantScope.query(). `config` is the configuration snapshot the
 * build used; `file_key` / `log_key` are storage keys (lib/storage), never shown to clients.
 */
export class ApkBuild extends Model {
  static tableName = 'apk_builds';
  static jsonAttributes = ['config'];
  id!: number;
  tenant_id!: number;
  app_type!: string;
  build_type!: 'debug' | 'release';
  status!: ApkBuildStatus;
  /** the toolchain that builds it: real Gradle and SDK, or the stub (labelled everywhere) */
  toolchain!: 'real' | 'stub';
  /** 0..100 */
  progress!: number;
  config!: Record<string, unknown>;
  version_name!: string;
  version_code!: number;
  error!: string | null;
  /** the last lines of the build's output, redacted */
  log_tail!: string | null;
  log_key!: string | null;
  file_key!: string | null;
  file_name!: string | null;
  /** APK size in bytes (bigint: a string from pg) */
  size_bytes!: string | number | null;
  sha256!: string | null;
  /** `> Task` lines the build printed (the next build's progress scale) */
  task_count!: number | null;
  /** the processor run that owns the row (a stale run writes nothing) */
  run_id!: string | null;
  /** how many processor runs started it (2 after a stalled job ran again) */
  runs!: number;
  requested_by!: number | null;
  cancel_requested_at!: Date | null;
  started_at!: Date | null;
  finished_at!: Date | null;
  /** set when retention deleted the stored APK (the row stays) */
  file_deleted_at!: Date | null;
  created_at!: Date;
  updated_at!: Date;
}
