import { expect } from 'chai';
import fs from 'node:fs';
import net from 'node:net';
import { freePort, portOpen } from '../../../lib/infra/free-port.js';

describe('freePort (lib/infra/free-port.ts)', () => {
  const low = Number(fs.readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);

  it('draws ports below the kernel ephemeral range that a server can then listen on', async () => {
    const ports = await Promise.all(Array.from({ length: 20 }, () => freePort()));
    for (const p of ports) {
      expect(p).to.be.at.least(10_000);
      expect(p).to.be.below(low);
    }
    // drawn at random: twenty draws out of thousands of ports are not all one
    expect(new Set(ports).size).to.be.above(1);
    const server = net.createServer();
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(ports[0], '127.0.0.1', () => resolve());
    });
    try {
      expect(await portOpen(ports[0])).to.equal(true);
    } finally {
      await new Promise((r) => server.close(r));
    }
    expect(await portOpen(ports[0])).to.equal(false);
  });
});
