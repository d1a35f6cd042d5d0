/**
 * Deterministic building blocks of the demo data set (db/seeds/demo.ts): a seeded PRNG and the
 * tables of names, streets, packages and OLTs it draws from. The same seed gives the same
 * customers, MAC addresses, serials and phone numbers on every machine, so the docs can refer to
 * them; only timestamps are relative to the moment of seeding.
 */

/** A seeded pseudo-random source (mulberry32). */
export interface Rng {
  /** Uniform float in [0, 1). */
  next(): number;
  /** Integer in [min, max] (inclusive). */
  int(min: number, max: number): number;
  /** Float in [min, max) rounded to `decimals`. */
  float(min: number, max: number, decimals: number): number;
  /** One element of a non-empty array. */
  pick<T>(items: readonly T[]): T;
  /** True with probability p. */
  chance(p: number): boolean;
  /** `n` upper-case hex digits. */
  hex(n: number): string;
  /** `n` decimal digits (may start with 0). */
  digits(n: number): string;
}

/** Creates a PRNG from a 32-bit seed; same seed, same sequence. */
export function createRng(seed: number): Rng {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (min: number, max: number) => min + Math.floor(next() * (max - min + 1));
  return {
    next,
    int,
    float: (min, max, decimals) => Number((min + next() * (max - min)).toFixed(decimals)),
    pick: (items) => items[Math.floor(next() * items.length)],
    chance: (p) => next() < p,
    hex: (n) => Array.from({ length: n }, () => '0123456789ABCDEF'[int(0, 15)]).join(''),
    digits: (n) => Array.from({ length: n }, () => String(int(0, 9))).join(''),
  };
}

/** Indonesian first names the demo customers are built from (fixed seed, same data on every machine). */
export const FIRST_NAMES = [
  'Andi',
  'Budi',
  'Citra',
  'Dewi',
  'Eko',
  'Fajar',
  'Gita',
  'Hendra',
  'Indah',
  'Joko',
  'Kartika',
  'Lestari',
  'Made',
  'Nur',
  'Oki',
  'Putri',
  'Rahmat',
  'Sari',
  'Teguh',
  'Utami',
  'Wahyu',
  'Yusuf',
  'Zahra',
  'Bayu',
  'Dian',
  'Fitri',
  'Galih',
  'Hana',
  'Irfan',
  'Ratna',
] as const;

/** Indonesian family names of the demo customers. */
export const LAST_NAMES = [
  'Saputra',
  'Wijaya',
  'Santoso',
  'Pratama',
  'Lestari',
  'Hidayat',
  'Kusuma',
  'Nugroho',
  'Setiawan',
  'Permana',
  'Siregar',
  'Hakim',
  'Rahman',
  'Putri',
  'Gunawan',
  'Firmansyah',
  'Wibowo',
  'Halim',
  'Susanto',
  'Maulana',
] as const;

/** Streets of Bandung for the demo addresses. */
export const STREETS = [
  'Jl. Dago',
  'Jl. Merdeka',
  'Jl. Buah Batu',
  'Jl. Cihampelas',
  'Jl. Setiabudi',
  'Jl. Pasteur',
  'Jl. Riau',
  'Jl. Sukajadi',
  'Jl. Antapani',
  'Jl. Soekarno-Hatta',
  'Jl. Cigadung',
  'Jl. Kiaracondong',
] as const;

/** Districts of Bandung for the demo addresses. */
export const DISTRICTS = [
  'Coblong',
  'Sumur Bandung',
  'Lengkong',
  'Cidadap',
  'Sukajadi',
  'Antapani',
  'Batununggal',
  'Cibeunying Kaler',
] as const;

/** Mobile prefixes of Indonesian operators (after +62). */
const MOBILE_PREFIXES = [
  '811',
  '812',
  '813',
  '821',
  '822',
  '852',
  '853',
  '857',
  '859',
  '877',
  '878',
  '895',
  '896',
] as const;

/** An E.164 Indonesian mobile number, e.g. +6281234567890. */
export function phoneNumber(rng: Rng): string {
  return `+62${rng.pick(MOBILE_PREFIXES)}${rng.digits(rng.int(7, 8))}`;
}

/** A MAC address in the stored form AA:BB:CC:DD:EE:FF (locally administered, unicast). */
export function macAddress(rng: Rng): string {
  const first = ((rng.int(0, 63) << 2) | 0x02).toString(16).toUpperCase().padStart(2, '0');
  return [first, ...Array.from({ length: 5 }, () => rng.hex(2))].join(':');
}

/** A street address in Bandung. */
export function streetAddress(rng: Rng): string {
  return `${rng.pick(STREETS)} No. ${rng.int(1, 220)}, RT 0${rng.int(1, 9)}/RW 0${rng.int(1, 9)}, ${rng.pick(DISTRICTS)}, Bandung`;
}

/** A demo service package (DESIGN.md §6 package fields; price in IDR a month, speeds in kbps). */
export interface DemoPackage {
  name: string;
  description: string;
  price: number;
  speed_down_kbps: number;
  speed_up_kbps: number;
  service_type: 'pppoe' | 'hotspot' | 'dhcp' | 'static';
  is_active: boolean;
  is_partner_package: boolean;
}

/**
 * The five packages of demo-isp: a hotspot voucher plan (sold by partners), a retired plan
 * (is_active false), two home plans and a business plan with a static IP.
 */
export const DEMO_PACKAGES: readonly DemoPackage[] = [
  {
    name: 'Hotspot Harian 5 Mbps',
    description: 'Daily hotspot voucher, sold through partner outlets.',
    price: 5000,
    speed_down_kbps: 5000,
    speed_up_kbps: 2000,
    service_type: 'hotspot',
    is_active: true,
    is_partner_package: true,
  },
  {
    name: 'Lite 10 Mbps',
    description: 'Retired entry plan, kept for existing subscribers.',
    price: 150000,
    speed_down_kbps: 10000,
    speed_up_kbps: 5000,
    service_type: 'pppoe',
    is_active: false,
    is_partner_package: false,
  },
  {
    name: 'Home 30 Mbps',
    description: 'Fibre to the home for browsing and streaming.',
    price: 250000,
    speed_down_kbps: 30000,
    speed_up_kbps: 15000,
    service_type: 'pppoe',
    is_active: true,
    is_partner_package: false,
  },
  {
    name: 'Family 50 Mbps',
    description: 'For households with several devices and 4K streaming.',
    price: 375000,
    speed_down_kbps: 50000,
    speed_up_kbps: 25000,
    service_type: 'pppoe',
    is_active: true,
    is_partner_package: false,
  },
  {
    name: 'Business 200 Mbps Static IP',
    description: 'Business fibre with a static public IPv4 address and priority support.',
    price: 1500000,
    speed_down_kbps: 200000,
    speed_up_kbps: 200000,
    service_type: 'static',
    is_active: true,
    is_partner_package: false,
  },
];

/** A demo OLT (DESIGN.md §6 OLT fields). */
export interface DemoOlt {
  name: string;
  vendor: 'ZTE' | 'Huawei';
  model: string;
  ip_address: string;
  location: string;
  pon_ports: number;
  serialPrefix: string;
  frame: number;
}

/** The demo tenant's two OLTs (ZTE and Huawei, issue 2 item 2). */
export const DEMO_OLTS: readonly DemoOlt[] = [
  {
    name: 'OLT-DAGO-01',
    vendor: 'ZTE',
    model: 'ZXA10 C320',
    ip_address: '10.20.0.2',
    location: 'POP Dago, Jl. Ir. H. Juanda 120, Bandung',
    pon_ports: 16,
    serialPrefix: 'ZTEG',
    frame: 1,
  },
  {
    name: 'OLT-BUAHBATU-01',
    vendor: 'Huawei',
    model: 'MA5608T',
    ip_address: '10.20.0.3',
    location: 'POP Buah Batu, Jl. Buah Batu 211, Bandung',
    pon_ports: 16,
    serialPrefix: 'HWTC',
    frame: 0,
  },
];

/** Problem categories of demo tickets. */
export const TICKET_TYPES = [
  'No internet',
  'Slow connection',
  'LOS red light on ONU',
  'Intermittent connection',
  'Relocation request',
  'Router replacement',
  'Package upgrade',
  'Billing question',
  'Wi-Fi password reset',
  'Cable cut after storm',
] as const;

/** Days in ms. */
export const DAY = 24 * 3600 * 1000;
/** An hour in ms. */
export const HOUR = 3600 * 1000;

/** 'YYYY-MM-DD' of a Date in UTC. */
export function ymd(d: Date): string {
  return d.toISOString().slice(0, 10);
}

/** First day of the month `back` months before `now` (UTC). */
export function monthStart(now: Date, back: number): Date {
  return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - back, 1));
}

/** Last day of the month that starts at `start` (UTC). */
export function monthEnd(start: Date): Date {
  return new Date(Date.UTC(start.getUTCFullYear(), start.getUTCMonth() + 1, 0));
}
