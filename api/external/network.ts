import type { TenantScope } from '../../db/tenant-scope.js';
import { Olt } from '../../db/models/index.js';
import { paginate, whereContains, type PageParams } from './query.js';
import { OLT_COLUMNS, oltShape, ONU_COLUMNS, onuFrom, onuShape } from './shapes.js';

/** OLTs and ONUs of the External v1 API (document 1: GET /api/external/v1/olts, /onus). */

/** Validated query of the OLT list. */
export interface OltListQuery extends PageParams {
  search?: string;
  status?: string;
}

/** Validated query of the ONU list. */
export interface OnuListQuery extends PageParams {
  search?: string;
  status?: string;
  customer_id?: number;
  olt_id?: number;
}

/**
 * GET /api/external/v1/olts: filters status (online, offline) and search (substring of name,
 * IP address, location, vendor or model). Newest first; exact total.
 */
export async function listOlts(scope: TenantScope, query: OltListQuery) {
  const q = scope.query(Olt);
  if (query.status) q.where('status', query.status);
  whereContains(q, ['name', 'ip_address', 'location', 'vendor', 'model'], query.search);
  return paginate(q, OLT_COLUMNS, ['created_at', 'id'], query, oltShape);
}

/**
 * GET /api/external/v1/onus: active ONUs only (onus.is_active); filters status (online, offline,
 * los, power_fail), customer_id, olt_id (foreign ids match nothing), search (substring of the
 * serial number). Newest first; exact total.
 */
export async function listOnus(scope: TenantScope, query: OnuListQuery) {
  const q = onuFrom(scope).where('n.is_active', true);
  if (query.status) q.where('n.status', query.status);
  if (query.customer_id) q.where('n.customer_id', query.customer_id);
  if (query.olt_id) q.where('n.olt_id', query.olt_id);
  whereContains(q, ['n.serial_number'], query.search);
  return paginate(q, ONU_COLUMNS, ['n.created_at', 'n.id'], query, onuShape);
}
