import { expect } from 'chai';
import { env } from '../../helpers/env.js';
import { startTestApp, type TestApp } from '../../helpers/http.js';
import { makeTenant, type TenantFixture } from '../../helpers/fixtures.js';
import { addDays, startOfDayIn, todayIn } from '../../../lib/clock.js';

/** Issue 11 item 5: statistics and logs, days in Asia/Jakarta, equal to GET /api/communications. */
describe('GET /api/wabot/statistics, /api/wabot/logs', function () {
  this.timeout(60_000);
  let app: TestApp;
  let f: TenantFixture;
  const TZ = 'Asia/Jakarta';
  const today = todayIn(TZ);
  const D1 = addDays(today, -3);
  const D2 = addDays(today, -2);
  const at = (day: string, ms: number) => new Date(startOfDayIn(TZ, day).getTime() + ms);
  const H = 3600_000;

  before(async () => {
    app = await startTestApp();
    f = await makeTenant({ timeZone: TZ });
    const row = (o: Record<string, unknown>) => ({
      tenant_id: f.tenant.id,
      channel: 'whatsapp',
      direction: 'out',
      status: 'sent',
      source: 'test',
      account_ref: 'acc-wablas',
      counterpart: '6281234567801',
      body_text: 'halo',
      ...o,
    });
    await env.knex('communication_messages').insert([
      row({ occurred_at: at(D1, H), body_text: 'Tagihan Desember' }),
      row({ occurred_at: at(D1, 2 * H), direction: 'in', status: 'received', body_text: 'tagihan' }),
      // 23:59 in Jakarta on D1 is 16:59 UTC: D1 in the tenant's zone
      row({
        occurred_at: at(D1, 24 * H - 60_000),
        status: 'delivered',
        account_ref: 'acc-fonnte',
        counterpart: '6281299990000',
      }),
      // 00:01 in Jakarta on D2 is still D1 in UTC: D2 in the tenant's zone
      row({ occurred_at: at(D2, 60_000), status: 'failed', error_code: 'invalid_recipient' }),
      row({
        occurred_at: at(D2, 3 * H),
        channel: 'messenger',
        direction: 'in',
        status: 'received',
        account_ref: 'acc-messenger',
        counterpart: 'PSID-1',
      }),
      // not counted: e-mail, a deleted row, a day outside the range
      row({
        occurred_at: at(D2, 4 * H),
        channel: 'email',
        account_ref: 'x@example.test',
        counterpart: 'y@example.test',
      }),
      row({ occurred_at: at(D2, 5 * H), deleted_at: new Date() }),
      row({ occurred_at: at(addDays(D1, -1), 12 * H) }),
    ]);
  });

  const get = (path: string) => app.request('GET', path, { token: f.adminToken });

  it('counts per status and direction, per account and per day, days in the tenant zone', async () => {
    const res = await get(`/api/wabot/statistics?date_from=${D1}&date_to=${D2}`);
    expect(res.status, res.text).to.equal(200);
    const d = res.body.data;
    expect(d).to.deep.include({ date_from: D1, date_to: D2, time_zone: TZ });
    const zero = { received: 0, queued: 0, pending: 0, sent: 0, delivered: 0, read: 0, failed: 0 };
    expect(d.totals).to.deep.equal({
      total: 5,
      in: 2,
      out: 3,
      by_status: { ...zero, received: 2, sent: 1, delivered: 1, failed: 1 },
    });
    expect(
      d.days.map((x: { date: string; total: number; in: number; out: number }) => [x.date, x.total, x.in, x.out]),
    ).to.deep.equal([
      [D1, 3, 1, 2],
      [D2, 2, 1, 1],
    ]);
    expect(d.accounts.map((a: { account_id: string; total: number }) => [a.account_id, a.total])).to.deep.equal([
      ['acc-fonnte', 1],
      ['acc-messenger', 1],
      ['acc-wablas', 3],
    ]);
  });

  it('equal to GET /api/communications (whatsapp + messenger) per day, direction and status', async () => {
    const stats = (await get(`/api/wabot/statistics?date_from=${D1}&date_to=${D2}`)).body.data;
    const listed = async (day: string, filter: string) => {
      let n = 0;
      for (const channel of ['whatsapp', 'messenger']) {
        const res = await get(`/api/communications?channel=${channel}&date_from=${day}&date_to=${day}&${filter}`);
        expect(res.status, res.text).to.equal(200);
        n += res.body.total;
      }
      return n;
    };
    for (const day of stats.days) {
      expect(await listed(day.date, 'direction=in'), `${day.date} in`).to.equal(day.in);
      expect(await listed(day.date, 'direction=out'), `${day.date} out`).to.equal(day.out);
      for (const [status, n] of Object.entries(day.by_status))
        expect(await listed(day.date, `status=${status}`), `${day.date} ${status}`).to.equal(n);
    }
  });

  it('default: the last 7 days to today; 366 days allowed, 367 and a reversed range are 422', async () => {
    const def = (await get('/api/wabot/statistics')).body.data;
    expect([def.date_from, def.date_to, def.days.length]).to.deep.equal([addDays(today, -6), today, 7]);
    expect(def.totals.total).to.equal(6); // the row of the day before D1 is within the last 7 days
    const year = await get(`/api/wabot/statistics?date_from=${addDays(today, -365)}&date_to=${today}`);
    expect(year.status).to.equal(200);
    expect(year.body.data.days).to.have.length(366);
    const long = await get(`/api/wabot/statistics?date_from=${addDays(today, -366)}&date_to=${today}`);
    expect(long.status).to.equal(422);
    expect(long.body.errors).to.have.property('date_to');
    const rev = await get(`/api/wabot/statistics?date_from=${D2}&date_to=${D1}`);
    expect(rev.status).to.equal(422);
    expect(rev.body.errors).to.have.property('date_from');
    expect((await get('/api/wabot/statistics?date_from=2026-13-01')).status).to.equal(422);
  });

  it('logs: list envelope newest first, filters status, direction, account_id, phone (leading 0), search, dates', async () => {
    const all = await get(`/api/wabot/logs?date_from=${D1}&date_to=${D2}`);
    expect(all.status, all.text).to.equal(200);
    expect(all.body).to.include({ total: 5, current_page: 1, per_page: 20 });
    expect(all.body.data[0]).to.deep.include({ channel: 'messenger', direction: 'in', account_id: 'acc-messenger' });
    const ids = (q: string) =>
      get(`/api/wabot/logs?${q}`).then((r) => {
        expect(r.status, r.text).to.equal(200);
        return r.body.data.map((m: { status: string; account_id: string }) => `${m.status}/${m.account_id}`);
      });
    expect(await ids('status=failed')).to.deep.equal(['failed/acc-wablas']);
    expect(await ids(`direction=in&date_from=${D1}&date_to=${D1}`)).to.deep.equal(['received/acc-wablas']);
    expect(await ids('account_id=acc-fonnte')).to.deep.equal(['delivered/acc-fonnte']);
    expect(await ids('phone=0812-9999-0000')).to.deep.equal(['delivered/acc-fonnte']);
    expect(await ids('search=DESEMBER')).to.deep.equal(['sent/acc-wablas']);
    expect((await get('/api/wabot/logs?status=bogus')).status).to.equal(422);
  });
});
