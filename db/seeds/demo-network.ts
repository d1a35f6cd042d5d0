import { HomeBase, Nas } from '../models/index.js';
import type { TenantScope } from '../tenant-scope.js';
import { fakeReading } from '../../jobs/adapters/olt/fake.js';
import type { OnuReading } from '../../jobs/adapters/olt/types.js';

/**
 * Demo network records of a tenant (issue 8 item 3): home bases (the two POPs of the demo OLTs and
 * a warehouse) and NAS routers (driver fake, no credentials: the seed has no APP_KEY). The ONU
 * readings of the demo are what the fake OLT driver reports (jobs/adapters/olt/fake.ts), "polled"
 * at the seed's moment, so the first real onu-poll run changes little besides uptime and last_seen.
 */

/** A demo home base; `olt` names the demo OLT (db/seeds/demo-data.ts DEMO_OLTS) that stands there. */
interface DemoHomeBase {
  name: string;
  address: string;
  latitude: number;
  longitude: number;
  olt: string | null;
}

const HOME_BASES: readonly DemoHomeBase[] = [
  {
    name: 'POP Dago',
    address: 'Jl. Ir. H. Juanda 120, Bandung',
    latitude: -6.889712,
    longitude: 107.613491,
    olt: 'OLT-DAGO-01',
  },
  {
    name: 'POP Buah Batu',
    address: 'Jl. Buah Batu 211, Bandung',
    latitude: -6.944611,
    longitude: 107.631822,
    olt: 'OLT-BUAHBATU-01',
  },
  {
    name: 'Gudang Kiaracondong',
    address: 'Jl. Kiaracondong 88, Bandung',
    latitude: -6.924503,
    longitude: 107.646977,
    olt: null,
  },
];

const NAS_ROWS = [
  { name: 'NAS-DAGO-01', nas_key: 'dago-core', host: '10.20.0.1', isolation_profile: 'isolir' },
  { name: 'NAS-BUAHBATU-01', nas_key: 'buahbatu-core', host: '10.20.0.5', isolation_profile: 'isolir' },
] as const;

/**
 * Writes the demo home bases and NAS of a tenant.
 * @param count how many of each: full 3 home bases and 2 NAS, small 1 and 1
 * @param now their created_at / updated_at
 * @returns demo OLT name -> id of the home base it stands at
 */
export async function seedHomeBasesAndNas(
  scope: TenantScope,
  opts: { now: Date; homeBases: number; nas: number },
): Promise<Map<string, number>> {
  const byOlt = new Map<string, number>();
  for (const hb of HOME_BASES.slice(0, opts.homeBases)) {
    const { olt, ...row } = hb;
    const created = await scope.create(HomeBase, { ...row, created_at: opts.now, updated_at: opts.now });
    if (olt) byOlt.set(olt, created.id);
  }
  for (const n of NAS_ROWS.slice(0, opts.nas)) {
    await scope.create(Nas, { ...n, driver: 'fake', port: 8728, created_at: opts.now, updated_at: opts.now });
  }
  return byOlt;
}

/**
 * The demo reading of an ONU: what the fake OLT driver reports for its serial at `now`.
 * @returns status, rx/tx power (dBm) and uptime (seconds); powers and uptime null unless online
 */
export function demoReading(serial: string, now: Date): OnuReading {
  return fakeReading(serial, now);
}
