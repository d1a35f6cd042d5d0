import { expect } from 'chai';
import { env } from '../../helpers/env.js';
import { acquireSendSlot, checkPace, peekSendSlot, readGrantLog, wakeDelayMs } from '../../../jobs/wabot/limiter.js';
import { loadConfig } from '../../../lib/config.js';
import { limiterKeys } from '../../../jobs/wabot/keys.js';

const PREFIX = `wabot-lim-${process.pid}`;
let seq = 0;
const tenant = () => 800_000 + (seq += 1);

describe('wabot limiter: one Lua script per account on Redis TIME', () => {
  it('grants N in a window, then answers the wait until the oldest grant leaves it, recording nothing', async () => {
    const t = tenant();
    // scale 60: the 60 s window is 1 s
    const opts = { timeScale: 60, prefix: PREFIX, grantLog: 100 };
    const limits = { maxPerMinute: 3, delaySeconds: 0 };
    const answers = [];
    for (let i = 0; i < 3; i++)
      answers.push(await acquireSendSlot(env.redis, t, 'a', limits, { ...opts, tag: `m${i}` }));
    expect(answers.map((a) => a.granted)).to.deep.equal([true, true, true]);
    const denied = await acquireSendSlot(env.redis, t, 'a', limits, { ...opts, tag: 'm3' });
    expect(denied.granted).to.equal(false);
    if (denied.granted) return;
    expect(denied.waitMs).to.be.within(1, 1000);
    const log = await readGrantLog(env.redis, t, 'a', PREFIX);
    expect(log.map((e) => e.tag)).to.deep.equal(['m0', 'm1', 'm2']);
    expect(await env.redis.llen(limiterKeys(t, 'a', PREFIX)[0])).to.equal(3);
    // after the wait the slot is free again
    await new Promise((r) => setTimeout(r, denied.waitMs + 5));
    const again = await acquireSendSlot(env.redis, t, 'a', limits, { ...opts, tag: 'm3' });
    expect(again.granted).to.equal(true);
    const times = (await readGrantLog(env.redis, t, 'a', PREFIX)).map((e) => e.atUs / 1000);
    expect(times[3] - times[0]).to.be.at.least(1000);
  });

  it('keeps the delay between two grants, and each account has its own keys', async () => {
    const t = tenant();
    const opts = { timeScale: 20, prefix: PREFIX, grantLog: 100 };
    const limits = { maxPerMinute: 0, delaySeconds: 4 }; // 200 ms at scale 20
    expect((await acquireSendSlot(env.redis, t, 'a', limits, opts)).granted).to.equal(true);
    const denied = await acquireSendSlot(env.redis, t, 'a', limits, opts);
    expect(denied.granted).to.equal(false);
    if (!denied.granted) expect(denied.waitMs).to.be.within(1, 200);
    expect((await acquireSendSlot(env.redis, t, 'b', limits, opts)).granted).to.equal(true);
    if (denied.granted) return;
    await new Promise((r) => setTimeout(r, denied.waitMs + 5));
    expect((await acquireSendSlot(env.redis, t, 'a', limits, opts)).granted).to.equal(true);
    const times = (await readGrantLog(env.redis, t, 'a', PREFIX)).map((e) => e.atUs / 1000);
    expect(times).to.have.length(2);
    expect(times[1] - times[0]).to.be.at.least(200);
  });

  it('0 and 0 is no cap and no delay: every ask is granted', async () => {
    const t = tenant();
    const got = [];
    for (let i = 0; i < 50; i++)
      got.push(
        (await acquireSendSlot(env.redis, t, 'x', { maxPerMinute: 0, delaySeconds: 0 }, { prefix: PREFIX })).granted,
      );
    expect(got.every(Boolean)).to.equal(true);
    // no log unless asked for
    expect(await readGrantLog(env.redis, t, 'x', PREFIX)).to.deep.equal([]);
  });

  it('holds exactly under 200 concurrent asks: grants paced, denials recorded nowhere', async function () {
    this.timeout(30_000);
    const t = tenant();
    const opts = { timeScale: 30, prefix: PREFIX, grantLog: 1000 }; // window 2 s, delay 1 s / 30 = 33 ms
    const limits = { maxPerMinute: 10, delaySeconds: 1 };
    const until = Date.now() + 3000;
    let granted = 0;
    await Promise.all(
      Array.from({ length: 200 }, async (_, i) => {
        while (Date.now() < until) {
          const a = await acquireSendSlot(env.redis, t, 'c', limits, { ...opts, tag: String(i) });
          if (a.granted) {
            granted += 1;
            return;
          }
          await new Promise((r) => setTimeout(r, Math.min(a.waitMs, 50)));
        }
      }),
    );
    // relative to the first grant, so that µs survive the division (ms since the epoch lose them)
    const log = await readGrantLog(env.redis, t, 'c', PREFIX);
    const times = log.map((e) => (e.atUs - (log[0]?.atUs ?? 0)) / 1000);
    expect(times).to.have.length(granted);
    expect(granted).to.be.within(10, 20);
    // the script works in whole µs: the scaled delay is 33333 µs, not 33.3333... ms
    const delayMs = Math.round(1e6 / 30) / 1000;
    const pace = checkPace(times, { maxPerMinute: 10, windowMs: 2000, delayMs });
    expect(pace.violations).to.equal(0);
    expect(pace.worstWindow).to.be.at.most(10);
    expect(pace.smallestGapMs).to.be.at.least(delayMs);
  });

  it('the waiting room ranks denied messages first come first, a grant takes one out, a peek grants nothing', async () => {
    const t = tenant();
    const limits = { maxPerMinute: 1, delaySeconds: 0 };
    const opts = { timeScale: 1, prefix: PREFIX, staleMs: 60_000 };
    expect(await peekSendSlot(env.redis, t, 'w', limits, { ...opts, tag: 'x' })).to.deep.equal({ waitMs: 0, rank: 0 });
    expect((await acquireSendSlot(env.redis, t, 'w', limits, { prefix: PREFIX, tag: 'first' })).granted).to.equal(true);
    const ranks = [];
    for (const tag of ['m1', 'm2', 'm3', 'm2'])
      ranks.push(await peekSendSlot(env.redis, t, 'w', limits, { ...opts, tag }));
    expect(ranks.map((r) => r.rank)).to.deep.equal([0, 1, 2, 1]);
    expect(ranks.every((r) => r.waitMs > 50_000 && r.waitMs <= 60_000)).to.equal(true);
    // peeks recorded no grant
    expect(await env.redis.llen(limiterKeys(t, 'w', PREFIX)[0])).to.equal(1);
    await env.redis.del(limiterKeys(t, 'w', PREFIX)[0]); // the window is over
    expect((await acquireSendSlot(env.redis, t, 'w', limits, { prefix: PREFIX, tag: 'm1' })).granted).to.equal(true);
    expect(await env.redis.zrange(limiterKeys(t, 'w', PREFIX)[2], '0', '-1')).to.deep.equal(['m2', 'm3']);
  });

  it('wakeDelayMs: the wait plus rank times the shortest spacing, capped at window + delay', () => {
    // 3 a minute, 10 s delay, scale 50: window 1200 ms, delay 200 ms, spacing max(200, 1200 / 6) = 200
    const a = { maxPerMinute: 3, delaySeconds: 10 };
    expect(wakeDelayMs(a, 50, 100, 0)).to.equal(100);
    expect(wakeDelayMs(a, 50, 100, 2)).to.equal(500);
    expect(wakeDelayMs(a, 50, 100, 50)).to.equal(1400);
    // no delay, 120 a minute: spacing 60 s / 240 = 250 ms at scale 1
    expect(wakeDelayMs({ maxPerMinute: 120, delaySeconds: 0 }, 1, 10, 4)).to.equal(1010);
  });

  it('checkPace counts window and gap violations', () => {
    const limits = { maxPerMinute: 2, windowMs: 100, delayMs: 10 };
    expect(checkPace([0, 10, 100, 110], limits)).to.deep.equal({ violations: 0, worstWindow: 2, smallestGapMs: 10 });
    expect(checkPace([0, 5, 50], limits)).to.deep.equal({ violations: 2, worstWindow: 3, smallestGapMs: 5 });
    expect(checkPace([0, 8, 100], limits, 2).violations).to.equal(0);
  });

  it('WABOT_TIME_SCALE: a number > 0, default 1', () => {
    expect(loadConfig({}).wabotTimeScale).to.equal(1);
    expect(loadConfig({ WABOT_TIME_SCALE: '50' }).wabotTimeScale).to.equal(50);
    expect(loadConfig({ WABOT_TIME_SCALE: '2.5' }).wabotTimeScale).to.equal(2.5);
    for (const bad of ['0', '-1', 'x', '1e3'])
      expect(() => loadConfig({ WABOT_TIME_SCALE: bad })).to.throw(/WABOT_TIME_SCALE/);
  });
});
