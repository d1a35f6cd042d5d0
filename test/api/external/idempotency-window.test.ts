import { expect } from 'chai';
import { startTestApp, type TestApp } from '../../helpers/http.js';
import { env } from '../../helpers/env.js';
import { countRows, makeWorld, V1, type World } from './world.js';

/** Issue 2 item 6: "a retry with the same key and body within 24 h replays the first response". */
describe('external v1: the Idempotency-Key window is 24 hours', () => {
  let app: TestApp;
  let a: World;

  before(async () => {
    app = await startTestApp();
    a = await makeWorld();
  });

  const age = (key: string, hours: number) =>
    env
      .knex('idempotency_keys')
      .where({ tenant_id: a.tenant.id, key })
      .update({ created_at: env.knex.raw(`now() - make_interval(hours => ?)`, [hours]) });

  for (const [resource, body] of [
    ['tickets', { type: 'window check' }],
    ['customers', { name: 'Window', phone: '1', address: 'Jl. 24' }],
  ] as const) {
    it(`${resource}: replays a retry 23 h later; after 24 h the same key and body create a new record`, async () => {
      const key = `window-${resource}`;
      const post = () =>
        app.request('POST', `${V1}/${resource}`, { token: a.write, body, headers: { 'idempotency-key': key } });
      const before = await countRows(resource, a.tenant.id);
      const first = await post();
      expect(first.status).to.equal(201);
      await age(key, 23);
      const replay = await post();
      expect(replay.headers.get('idempotent-replayed')).to.equal('true');
      expect(replay.body.data.id).to.equal(first.body.data.id);
      expect(await countRows(resource, a.tenant.id)).to.equal(before + 1);
      await age(key, 25);
      const fresh = await post();
      expect(fresh.status).to.equal(201);
      expect(fresh.headers.get('idempotent-replayed')).to.equal(null);
      expect(fresh.body.data.id).to.not.equal(first.body.data.id);
      expect(await countRows(resource, a.tenant.id)).to.equal(before + 2);
    });
  }
});
