import fs from 'node:fs';
import net from 'node:net';

/** Lowest port freePort draws from. */
const DRAW_FROM = 10_000;

/**
 * The first port of the kernel's ephemeral range (Linux: /proc/sys/net/ipv4/ip_local_port_range,
 * default 32768); elsewhere 32768.
 */
function ephemeralLow(): number {
  try {
    const low = Number(fs.readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
    return Number.isInteger(low) && low > 0 ? low : 32_768;
  } catch {
    return 32_768;
  }
}

/** Listens on 127.0.0.1:port (0: the kernel picks), reads the port, closes; rejects on EADDRINUSE. */
function tryListen(port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.unref();
    s.on('error', reject);
    s.listen({ port, host: '127.0.0.1', exclusive: true }, () => {
      const { port: got } = s.address() as net.AddressInfo;
      s.close(() => resolve(got));
    });
  });
}

/**
 * A free TCP port on 127.0.0.1 for a server about to be started (Redis, Dovecot, a test's web).
 * Drawn at random below the kernel's ephemeral range and checked by listening on it: the kernel
 * hands ephemeral ports to every outgoing connection and every `listen(0)`, so a port taken from
 * that range was often in use again before its server bound it (two test shards each got one
 * port twice). Falls back to the kernel's choice when the draw finds none in 50 tries.
 * @returns the port number
 */
export async function freePort(): Promise<number> {
  const high = ephemeralLow();
  if (high - DRAW_FROM >= 1000) {
    for (let i = 0; i < 50; i++) {
      const port = DRAW_FROM + Math.floor(Math.random() * (high - DRAW_FROM));
      try {
        return await tryListen(port);
      } catch {
        /* in use (or not ours to bind): draw again */
      }
    }
  }
  return tryListen(0);
}

/** True when something accepts TCP connections on 127.0.0.1:port. */
export function portOpen(port: number, host = '127.0.0.1'): Promise<boolean> {
  return new Promise((resolve) => {
    const c = net.connect({ port, host });
    c.once('connect', () => {
      c.destroy();
      resolve(true);
    });
    c.once('error', () => resolve(false));
  });
}
