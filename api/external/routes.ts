import type { RouteDef } from '../http/route.js';

/** External integration API v1 (document 1). */
export const externalRoutes: RouteDef[] = [];
