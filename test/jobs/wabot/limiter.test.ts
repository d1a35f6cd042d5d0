import { expect } from 'chai';
import { env } from '../../helpers/env.js';
import {
  acquireSendSlot,
  completeSendSlot,
  peekSendSlot,
  wakeDelayMs,
  waitingStaleMs,
} from '../../../jobs/wabot/limiter.js';
import { checkPace, readGrantLog } from '../../../jobs/wabot/grant-log.js';
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
    expect(await env.redis.zcard(limiterKeys(t, 'a', PREFIX).done)).to.equal(3);
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

  it('a send under way holds a delayed account until its answer; the delay counts from the answer', async () => {
    const t = tenant();
    const opts = { timeScale: 20, prefix: PREFIX, leaseMs: 60_000 };
    const limits = { maxPerMinute: 0, delaySeconds: 20 }; // 1 s at scale 20
    const redisNowUs = async () => {
      const [sec, usec] = await env.redis.time();
      return Number(sec) * 1e6 + Number(usec);
    };
    const first = await acquireSendSlot(env.redis, t, 'f', limits, { ...opts, tag: 'm1' });
    expect(first.granted).to.equal(true);
    if (!first.granted) return;
    // while the send is under way no second grant, and the wait is the whole delay
    await new Promise((r) => setTimeout(r, 150));
    const held = await acquireSendSlot(env.redis, t, 'f', limits, { ...opts, tag: 'm2' });
    expect(held).to.deep.equal({ granted: false, waitMs: 1000 });
    expect(await completeSendSlot(env.redis, t, 'f', limits, { atUs: first.atUs, tag: 'm1' }, true, opts)).to.equal(
      true,
    );
    const [, answeredUs] = await env.redis.zrange(limiterKeys(t, 'f', PREFIX).done, '0', '0', 'WITHSCORES');
    expect(Number(answeredUs) - first.atUs).to.be.at.least(150_000);
    expect(await env.redis.zcard(limiterKeys(t, 'f', PREFIX).flight)).to.equal(0);
    // after the answer the delay runs from the answer, not from the grant
    const after = await acquireSendSlot(env.redis, t, 'f', limits, { ...opts, tag: 'm2' });
    const askedBy = await redisNowUs();
    expect(after.granted).to.equal(false);
    if (!after.granted) expect(after.waitMs * 1000).to.be.at.least(Number(answeredUs) + 1e6 - askedBy - 1000);
  });

  it('sends under way fill the window; one known not to have left is forgotten; an ended lease counts', async () => {
    const t = tenant();
    const opts = { timeScale: 60, prefix: PREFIX, leaseMs: 60_000 }; // window 1 s
    const limits = { maxPerMinute: 2, delaySeconds: 0 };
    const a = await acquireSendSlot(env.redis, t, 'g', limits, { ...opts, tag: 'a' });
    const b = await acquireSendSlot(env.redis, t, 'g', limits, { ...opts, tag: 'b' });
    expect([a.granted, b.granted]).to.deep.equal([true, true]);
    expect(await acquireSendSlot(env.redis, t, 'g', limits, { ...opts, tag: 'c' })).to.deep.equal({
      granted: false,
      waitMs: 1000,
    });
    if (!b.granted) return;
    // b was refused by the network before it left: its slot is free again at once
    expect(await completeSendSlot(env.redis, t, 'g', limits, { atUs: b.atUs, tag: 'b' }, false, opts)).to.equal(true);
    expect((await acquireSendSlot(env.redis, t, 'g', limits, { ...opts, tag: 'c' })).granted).to.equal(true);
    // a lease of 50 ms that nobody ends counts as a send finished at its end
    const u = tenant();
    const short = { ...opts, leaseMs: 50 };
    const lone = await acquireSendSlot(env.redis, u, 'g', { maxPerMinute: 1, delaySeconds: 0 }, { ...short, tag: 'x' });
    expect(lone.granted).to.equal(true);
    // 100 ms on Node's timer: at least 80 ms on Redis TIME, which the script reads (a timer may fire
    // a millisecond early against the other clock: with 80 ms the bound below once missed by 1 ms)
    await new Promise((r) => setTimeout(r, 100));
    const next = await acquireSendSlot(env.redis, u, 'g', { maxPerMinute: 1, delaySeconds: 0 }, { ...short, tag: 'y' });
    expect(next.granted).to.equal(false);
    // the window runs from the lease's end (grant + 50 ms)
    if (!next.granted) expect(next.waitMs).to.be.within(1, 970);
    expect(await env.redis.zrange(limiterKeys(u, 'g', PREFIX).done, '0', '-1', 'WITHSCORES')).to.deep.equal([
      `x:${lone.granted ? lone.atUs : 0}`,
      String((lone.granted ? lone.atUs : 0) + 50_000),
    ]);
    expect(await env.redis.zcard(limiterKeys(u, 'g', PREFIX).flight)).to.equal(0);
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
    // each waits for its own projected slot: one a minute, rank r is r + 1 minutes away
    for (const r of ranks) expect(r.waitMs).to.be.within((r.rank + 1) * 60_000 - 10_000, (r.rank + 1) * 60_000);
    // peeks recorded no grant
    expect(await env.redis.zcard(limiterKeys(t, 'w', PREFIX).done)).to.equal(1);
    await env.redis.del(limiterKeys(t, 'w', PREFIX).done); // the window is over
    expect((await acquireSendSlot(env.redis, t, 'w', limits, { prefix: PREFIX, tag: 'm1' })).granted).to.equal(true);
    expect(await env.redis.zrange(limiterKeys(t, 'w', PREFIX).waiting, '0', '-1')).to.deep.equal(['m2', 'm3']);
  });

  it('the projected slot follows the ideal schedule: two a window, then the window again', async () => {
    const t = tenant();
    const limits = { maxPerMinute: 2, delaySeconds: 0 };
    const opts = { timeScale: 60, prefix: PREFIX, staleMs: 60_000 }; // window 1 s
    const redisNowUs = async () => {
      const [sec, usec] = await env.redis.time();
      return Number(sec) * 1e6 + Number(usec);
    };
    const a = await acquireSendSlot(env.redis, t, 'p', limits, { ...opts, tag: 'a' });
    const b = await acquireSendSlot(env.redis, t, 'p', limits, { ...opts, tag: 'b' });
    if (!a.granted || !b.granted) throw new Error('two grants expected');
    // ideal slots of the next four: a + 1 s, b + 1 s, a + 2 s, b + 2 s
    const expected = [a.atUs + 1e6, b.atUs + 1e6, a.atUs + 2e6, b.atUs + 2e6];
    for (const [i, tag] of ['m0', 'm1', 'm2', 'm3'].entries()) {
      const before = await redisNowUs();
      const peek = await peekSendSlot(env.redis, t, 'p', limits, { ...opts, tag });
      const after = await redisNowUs();
      expect(peek.rank).to.equal(i);
      expect(peek.waitMs * 1000).to.be.within(expected[i] - after, expected[i] - before + 1000);
    }
  });

  it('wakeDelayMs: until the projected slot, at most twice the window plus the delay', () => {
    // 3 a minute, 10 s delay, scale 50: window 1200 ms, delay 200 ms, longest sleep 2800 ms
    const a = { maxPerMinute: 3, delaySeconds: 10 };
    expect(wakeDelayMs(a, 50, 100)).to.equal(100);
    expect(wakeDelayMs(a, 50, 2799.5)).to.equal(2800);
    expect(wakeDelayMs(a, 50, 60_000)).to.equal(2800);
    expect(waitingStaleMs(a, 50)).to.equal(2 * 2800 + 5000);
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
