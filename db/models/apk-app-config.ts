import { Model } from 'objection';

/**
 * Row of `apk_app_configs` (issue 12 item 2; document 2 "Mobile app build configuration"): one
 * tenant's build configuration of one app type. Tenant-scoped: query it through TenantScope.query().
 */
export class ApkAppConfig extends Model {
  static tableName = 'apk_app_configs';
  id!: number;
  tenant_id!: number;
  /** portal, netadmin, partner or absensi (jobs/apk/signing.ts APK_APP_TYPES) */
  app_type!: string;
  app_name!: string;
  package_id!: string;
  version_name!: string;
  /** Android versionCode, 1..2100000000 */
  version_code!: number;
  base_url!: string;
  /** null = `{base_url}/api` */
  api_url!: string | null;
  environment!: 'sandbox' | 'production';
  /** `#RRGGBB` */
  theme_color!: string;
  orientation!: 'portrait' | 'landscape' | 'default';
  signing_mode!: 'debug' | 'release';
  enabled!: boolean;
  created_at!: Date;
  updated_at!: Date;
}
