import { expect } from 'chai';
import { execa } from 'execa';
import { env } from '../../helpers/env.js';
import { pickAccount } from '../../../jobs/wabot/routing.js';
import { routingKey } from '../../../jobs/wabot/keys.js';
import { gatewayAccount, memoryConfig } from '../../../bench/wabot/gateway.js';

let tenantSeq = 0;
/** A tenant id of its own per test (the routing keys are per tenant; no database row needed). */
const nextTenant = () => 900_000 + process.pid * 10 + (tenantSeq += 1);
const PREFIX = `wabot-test-${process.pid}`;

async function picks(config: ReturnType<typeof memoryConfig>, n: number): Promise<string[]> {
  const out: string[] = [];
  for (let i = 0; i < n; i++) out.push((await pickAccount(env.redis, config, { prefix: PREFIX }))!.id);
  return out;
}

describe('wabot routing: smooth weighted round-robin shared in Redis', () => {
  it('weights 5, 1, 1 give a a b a c a a, cycle after cycle', async () => {
    const accounts = [
      gatewayAccount('http://x', 'a', { weight: 5 }),
      gatewayAccount('http://x', 'b', { weight: 1 }),
      gatewayAccount('http://x', 'c', { weight: 1 }),
    ];
    const config = memoryConfig(nextTenant(), accounts);
    expect(await picks(config, 14)).to.deep.equal('aabacaa'.repeat(2).split(''));
  });

  it('never picks a disabled account, and a single enabled account needs no Redis', async () => {
    const tenantId = nextTenant();
    const accounts = [
      gatewayAccount('http://x', 'a', { weight: 3 }),
      gatewayAccount('http://x', 'off', { weight: 100, enabled: false }),
      gatewayAccount('http://x', 'b', { weight: 1 }),
    ];
    const got = await picks(memoryConfig(tenantId, accounts), 40);
    expect(got.filter((id) => id === 'off')).to.have.length(0);
    expect(got.filter((id) => id === 'a')).to.have.length(30);
    expect(got.filter((id) => id === 'b')).to.have.length(10);

    const single = memoryConfig(nextTenant(), [accounts[1], accounts[2]]);
    expect(await picks(single, 3)).to.deep.equal(['b', 'b', 'b']);
    expect(await env.redis.exists(routingKey(single.tenantId, PREFIX))).to.equal(0);
    expect(await pickAccount(env.redis, memoryConfig(nextTenant(), [accounts[1]]), { prefix: PREFIX })).to.equal(null);
  });

  it('resets its state when the pool version changes', async () => {
    const tenantId = nextTenant();
    const accounts = [gatewayAccount('http://x', 'a', { weight: 5 }), gatewayAccount('http://x', 'b', { weight: 1 })];
    const v1 = memoryConfig(tenantId, accounts, { poolVersion: 'v1' });
    expect(await picks(v1, 3)).to.deep.equal(['a', 'a', 'a']);
    // a new version starts from zero: the same first picks as a fresh pool
    const v2 = memoryConfig(tenantId, accounts, { poolVersion: 'v2' });
    expect(await picks(v2, 6)).to.deep.equal(['a', 'a', 'a', 'b', 'a', 'a']);
    expect(await env.redis.hget(routingKey(tenantId, PREFIX), 'v')).to.equal('v2');
  });

  it('10,000 picks from 3 processes at once are within 1 % of the weights', async function () {
    this.timeout(120_000);
    const tenantId = nextTenant();
    const pool: [string, number][] = [
      ['heavy', 6],
      ['mid', 3],
      ['light', 1],
    ];
    const per = [3334, 3333, 3333];
    const children = per.map((n) =>
      execa(process.execPath, ['--import', 'tsx', 'test/jobs/wabot/route-child.ts'], {
        env: {
          ...process.env,
          REDIS_URL: env.redisUrl,
          TENANT_ID: String(tenantId),
          PICKS: String(n),
          PREFIX,
          POOL: JSON.stringify(pool),
        },
        timeout: 110_000,
      }),
    );
    // start all three together
    await Promise.all(
      children.map(
        (c) =>
          new Promise<void>((resolve) => {
            let out = '';
            c.stdout!.on('data', (d: Buffer) => {
              out += d.toString();
              if (out.includes('READY')) resolve();
            });
          }),
      ),
    );
    for (const c of children) c.stdin!.write('GO\n');
    const results = await Promise.all(children);
    const total: Record<string, number> = {};
    for (const r of results) {
      const counts = JSON.parse(String(r.stdout).trim().split('\n').pop()!) as Record<string, number>;
      for (const [id, n] of Object.entries(counts)) total[id] = (total[id] ?? 0) + n;
    }
    expect(Object.values(total).reduce((s, n) => s + n, 0)).to.equal(10_000);
    for (const [id, w] of pool) {
      const share = (total[id] ?? 0) / 10_000;
      expect(Math.abs(share - w / 10), `${id}: ${share}`).to.be.at.most(0.01);
    }
    // each process got a mix, not one account each
    for (const r of results)
      expect(Object.keys(JSON.parse(String(r.stdout).trim().split('\n').pop()!))).to.have.length(3);
  });
});
