import { createHash } from 'node:crypto';
import type { OltAdapter, OltTarget, OnuReading, OnuStatus, PollOptions } from './types.js';

/**
 * Driver `fake` (issue 8 item 3): an OLT that answers with deterministic readings per serial
 * number, for tests, the demo and development. It reports every serial it is asked about:
 * - status: about 80 % online, 9 % los, 6 % offline, 5 % power_fail, fixed per serial;
 * - rx_power -8.00 .. -28.00 dBm and tx_power +0.50 .. +4.99 dBm, fixed per serial (online only);
 * - uptime in seconds: the ONU "reboots" every 5..44 days at a per-serial phase, so it grows with
 *   the clock and is the same for the same serial and moment (online only).
 * It never needs credentials and never throws.
 */

const DAY_S = 24 * 3600;

/** Four independent 32-bit numbers from a serial (SHA-256, case-insensitive). */
function hashes(serial: string): [number, number, number, number] {
  const h = createHash('sha256').update(serial.toUpperCase()).digest();
  return [h.readUInt32BE(0), h.readUInt32BE(4), h.readUInt32BE(8), h.readUInt32BE(12)];
}

/**
 * The fake reading of one serial at a moment.
 * @param serial the ONU's serial number (case-insensitive)
 * @param now the poll's moment (uptime grows with it)
 * @returns status, rx/tx power (dBm, 2 decimals) and uptime (seconds); powers and uptime null unless online
 */
export function fakeReading(serial: string, now: Date): OnuReading {
  const [a, b, c, d] = hashes(serial);
  const bucket = a % 100;
  const status: OnuStatus = bucket < 80 ? 'online' : bucket < 89 ? 'los' : bucket < 95 ? 'offline' : 'power_fail';
  if (status !== 'online') return { serial_number: serial, status, rx_power: null, tx_power: null, uptime: null };
  const period = (5 + (d % 40)) * DAY_S;
  const uptime = (Math.floor(now.getTime() / 1000) + (c % period)) % period;
  return {
    serial_number: serial,
    status,
    rx_power: -(800 + (b % 2001)) / 100,
    tx_power: (50 + (c % 450)) / 100,
    uptime,
  };
}

/** The fake driver (stateless). */
export const fakeOltAdapter: OltAdapter = {
  driver: 'fake',
  async poll(target: OltTarget, opts: PollOptions) {
    opts.signal?.throwIfAborted();
    return target.serials.map((s) => fakeReading(s, opts.now));
  },
};
