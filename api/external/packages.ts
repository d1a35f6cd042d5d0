import type { TenantScope } from '../../db/tenant-scope.js';
import { Package } from '../../db/models/index.js';
import { flag, paginate, whereContains, type PageParams } from './query.js';
import { PACKAGE_COLUMNS, packageShape } from './shapes.js';

/** Service packages of the External v1 API (document 1: GET /api/external/v1/packages). */

/** Validated query of the packages list (is_active: "true" | "false" | "1" | "0"). */
export interface PackageListQuery extends PageParams {
  search?: string;
  is_active?: string;
}

/**
 * GET /api/external/v1/packages: filters is_active and search (substring of the name).
 * Newest first; exact total.
 */
export async function listPackages(scope: TenantScope, query: PackageListQuery) {
  const q = scope.query(Package);
  const active = flag(query.is_active);
  if (active !== undefined) q.where('is_active', active);
  whereContains(q, ['name'], query.search);
  return paginate(q, PACKAGE_COLUMNS, ['created_at', 'id'], query, packageShape);
}
