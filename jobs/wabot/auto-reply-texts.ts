import { money, toDbString, type MoneyInput } from '../../lib/money.js';

/**
 * The chat bot's auto-reply texts (issue 11 item 2, decision: Indonesian, the spec's market; one
 * file so an operator's wording change touches nothing else). Pure functions of the records they
 * show; WhatsApp renders `*bold*`.
 */

/** The keyword groups a customer can write (matched as whole words, any case). */
export const KEYWORDS = {
  invoices: ['tagihan', 'invoice'],
  status: ['status'],
  tickets: ['tiket', 'ticket'],
} as const;

/** One unpaid invoice as the reply lists it. */
export interface InvoiceLine {
  invoice_number: string;
  amount: MoneyInput;
  /** YYYY-MM-DD */
  due_date: string;
}

/** One open ticket as the reply lists it. */
export interface TicketLine {
  ticket_number: string;
  type: string;
  status: string;
}

/** `Rp 150.000` / `Rp 150.000,50`: Indonesian grouping, cents only when there are some. */
export function rupiah(amount: MoneyInput): string {
  const [int, frac] = toDbString(money(amount)).split('.');
  const neg = int.startsWith('-');
  const digits = neg ? int.slice(1) : int;
  const grouped = digits.replace(/\B(?=(\d{3})+(?!\d))/g, '.');
  return `${neg ? '-' : ''}Rp ${grouped}${frac && frac !== '00' ? `,${frac}` : ''}`;
}

/** `2026-12-05` -> `05-12-2026` (the way dates are written in Indonesia). */
export function tanggal(date: string): string {
  const m = /^(\d{4})-(\d{2})-(\d{2})/.exec(date);
  return m ? `${m[3]}-${m[2]}-${m[1]}` : date;
}

/** The menu of a known customer who wrote no keyword. */
export function menuText(name: string): string {
  return [
    `Halo ${name}, ini layanan otomatis kami.`,
    'Balas dengan salah satu kata berikut:',
    '• *TAGIHAN* – tagihan yang belum dibayar',
    '• *STATUS* – status layanan dan paket',
    '• *TIKET* – tiket gangguan yang masih terbuka',
  ].join('\n');
}

/** Unpaid invoices (number, amount, due date), or that there are none. */
export function invoicesText(name: string, invoices: InvoiceLine[]): string {
  if (!invoices.length) return `Halo ${name}, tidak ada tagihan yang belum dibayar. Terima kasih!`;
  return [
    `Halo ${name}, tagihan yang belum dibayar:`,
    ...invoices.map(
      (i, n) => `${n + 1}. ${i.invoice_number} – ${rupiah(i.amount)} – jatuh tempo ${tanggal(i.due_date)}`,
    ),
  ].join('\n');
}

const STATUS_LABELS: Record<string, string> = { active: 'Aktif', suspended: 'Diisolir', terminated: 'Berhenti' };

/** The customer's service status and package. */
export function statusText(
  name: string,
  status: string,
  pkg: { name: string; speed_down_kbps: number } | null,
): string {
  const speed = pkg && pkg.speed_down_kbps > 0 ? ` (${Math.round(pkg.speed_down_kbps / 1000)} Mbps)` : '';
  return [
    `Halo ${name}, status layanan Anda: *${STATUS_LABELS[status] ?? status}*`,
    `Paket: ${pkg ? `${pkg.name}${speed}` : 'belum ada paket'}`,
  ].join('\n');
}

const TICKET_LABELS: Record<string, string> = { open: 'Terbuka', inprogress: 'Diproses' };

/** Open tickets (number, type, state), or that there are none. */
export function ticketsText(name: string, tickets: TicketLine[]): string {
  if (!tickets.length) return `Halo ${name}, tidak ada tiket gangguan yang masih terbuka.`;
  return [
    `Halo ${name}, tiket gangguan yang masih terbuka:`,
    ...tickets.map((t, n) => `${n + 1}. ${t.ticket_number} – ${t.type} – ${TICKET_LABELS[t.status] ?? t.status}`),
  ].join('\n');
}

/** The one reply to a sender whose number is no customer's (reply_unknown_customers). */
export const UNKNOWN_NUMBER_TEXT =
  'Maaf, nomor ini belum terdaftar sebagai pelanggan kami. ' +
  'Silakan hubungi admin dengan menyebutkan nama dan alamat pemasangan Anda.';

/** Which keyword group a message asks for (first in the order invoices, status, tickets), or null. */
export function keywordOf(text: string): keyof typeof KEYWORDS | null {
  const words = new Set(
    text
      .toLowerCase()
      .split(/[^a-z0-9]+/)
      .filter(Boolean),
  );
  for (const group of ['invoices', 'status', 'tickets'] as const) {
    if (KEYWORDS[group].some((k) => words.has(k))) return group;
  }
  return null;
}
