import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import { INBOUND_PARSERS, parseInboundWith, timeOf } from '../../../../jobs/adapters/chat-providers/inbound-parsers.js';
import { PROVIDERS } from '../../../../jobs/adapters/chat-providers/types.js';

const DIR = path.join(path.dirname(fileURLToPath(import.meta.url)), '../../../fixtures/wabot');
const load = (f: string) => JSON.parse(fs.readFileSync(path.join(DIR, f), 'utf8')) as Record<string, unknown>;

/** Issue 11 item 1: the adapters' pure webhook readers (parseInbound). */
describe('chat providers: parseInbound', () => {
  it("each fixture is read by its own provider's parser and by no other one", () => {
    const files = fs.readdirSync(DIR).filter((f) => f.endsWith('.json'));
    expect(files.length).to.equal(16);
    for (const f of files) {
      const readers = PROVIDERS.filter((p) => INBOUND_PARSERS[p](load(f)) !== null);
      expect(readers, f).to.deep.equal([f.split('-')[0]]);
    }
    expect(parseInboundWith([...PROVIDERS], { hello: 'world' })).to.equal(null);
    expect(parseInboundWith(['wablas'], load('fonnte-message.json'))).to.equal(null);
  });

  it('waha: message.ack values map to sent, delivered, read, failed; PENDING and other events are ignored', () => {
    const ack = (n: number) => {
      const b = load('waha-ack.json');
      (b.payload as Record<string, unknown>).ack = n;
      delete (b.payload as Record<string, unknown>).ackName;
      return INBOUND_PARSERS.waha(b)![0];
    };
    expect([1, 2, 3, 4, -1].map((n) => (ack(n) as { status: string }).status)).to.deep.equal([
      'sent',
      'delivered',
      'read',
      'read',
      'failed',
    ]);
    expect(ack(0).kind).to.equal('ignored');
    expect(INBOUND_PARSERS.waha({ event: 'session.status', session: 'default', payload: {} })).to.deep.equal([
      { kind: 'ignored', reason: 'waha: event session.status' },
    ]);
  });

  it('messenger: one item per messaging entry; a read is a watermark for the sender; echoes ignored', () => {
    const body = {
      object: 'page',
      entry: [
        {
          id: '1045',
          messaging: [
            {
              sender: { id: 'P1' },
              recipient: { id: '1045' },
              timestamp: 1764720000000,
              message: { mid: 'm1', text: 'a' },
            },
            { sender: { id: 'P1' }, recipient: { id: '1045' }, read: { watermark: 1764720005000 } },
            {
              sender: { id: 'P2' },
              recipient: { id: '1045' },
              message: { mid: 'm2', attachments: [{ type: 'image' }] },
            },
          ],
        },
      ],
    };
    const items = INBOUND_PARSERS.messenger(body)!;
    expect(items.map((i) => i.kind)).to.deep.equal(['message', 'read_watermark', 'message']);
    expect(items[1]).to.deep.equal({
      kind: 'read_watermark',
      chat: 'P1',
      watermark: new Date(1764720005000),
      accountRef: '1045',
    });
    expect(items[2]).to.deep.include({ chat: 'P2', text: '[image]', chatKind: 'conversation' });
  });

  it('fonnte: a member given as {jid, name}; its own device number as sender is its own message', () => {
    const g = INBOUND_PARSERS.fonnte({
      ...load('fonnte-group.json'),
      member: { jid: '6281234567801@s.whatsapp.net', name: 'Budi' },
    })![0];
    expect(g).to.deep.include({ chatKind: 'group', member: '6281234567801' });
    const own = INBOUND_PARSERS.fonnte({ ...load('fonnte-message.json'), sender: '6281200000002' })![0];
    expect(own).to.deep.include({ fromMe: true });
  });

  it('times: Unix seconds, milliseconds, numeric strings and ISO texts; garbage is null', () => {
    const at = new Date('2026-12-03T00:00:00Z');
    expect(timeOf(at.getTime() / 1000)).to.deep.equal(at);
    expect(timeOf(at.getTime())).to.deep.equal(at);
    expect(timeOf(String(at.getTime() / 1000))).to.deep.equal(at);
    expect(timeOf('2026-12-03T00:00:00Z')).to.deep.equal(at);
    expect([timeOf('soon'), timeOf(-5), timeOf({}), timeOf(undefined)]).to.deep.equal([null, null, null, null]);
  });
});
