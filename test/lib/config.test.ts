import { expect } from 'chai';
import {
  cacheDirSetting,
  colorWanted,
  ConfigError,
  dataDirSetting,
  databaseUrlSetting,
  isDevSupervisor,
  loadConfig,
  loadServerConfig,
  parseAppKey,
  searchPath,
  stateDirSetting,
} from '../../lib/config.js';

const HEX_KEY = 'ab'.repeat(32);
const SERVER_ENV = {
  DATABASE_URL: 'postgres://u:p@127.0.0.1:5432/isp',
  REDIS_URL: 'redis://127.0.0.1:6379',
  APP_KEY: HEX_KEY,
};

/** The ConfigError thrown by `fn` (fails the test when none is thrown). */
function configError(fn: () => unknown): ConfigError {
  try {
    fn();
  } catch (e) {
    expect(e).to.be.instanceOf(ConfigError);
    return e as ConfigError;
  }
  throw new Error('expected a ConfigError');
}

/** lib/config.ts: the environment validated at start (DESIGN.md §1, §4 "Config"). */
describe('lib/config: environment validation', () => {
  it('uses the documented defaults for an empty environment', () => {
    const c = loadConfig({});
    expect(c).to.deep.include({
      port: 3000,
      mailPort: 3001,
      publicBaseUrl: 'http://127.0.0.1:3000',
      mailBaseUrl: 'http://127.0.0.1:3001',
      databaseUrl: undefined,
      redisUrl: undefined,
      appKey: undefined,
      workerQueues: [],
      logLevel: 'info',
      externalRateLimit: 600,
    });
  });

  it('reads well-formed values (base URLs follow the ports unless given; trailing slash dropped; WORKER_QUEUES split)', () => {
    const c = loadConfig({
      PORT: '8080',
      MAIL_PORT: '8081',
      MAIL_BASE_URL: 'https://mail.example.test/',
      DATABASE_URL: 'postgresql://db/isp',
      REDIS_URL: 'rediss://cache:6380',
      APP_KEY: HEX_KEY,
      WORKER_QUEUES: ' ticket-sla, invoice-overdue ,',
      LOG_LEVEL: 'debug',
      EXTERNAL_RATE_LIMIT: '50',
    });
    expect(c).to.deep.include({
      port: 8080,
      mailPort: 8081,
      publicBaseUrl: 'http://127.0.0.1:8080',
      mailBaseUrl: 'https://mail.example.test',
      databaseUrl: 'postgresql://db/isp',
      redisUrl: 'rediss://cache:6380',
      workerQueues: ['ticket-sla', 'invoice-overdue'],
      logLevel: 'debug',
      externalRateLimit: 50,
    });
    expect(c.appKey!.equals(Buffer.from(HEX_KEY, 'hex'))).to.equal(true);
  });

  const malformed: [string, string][] = [
    ['PORT', 'abc'],
    ['PORT', '-1'],
    ['PORT', '65536'],
    ['PORT', '80.5'],
    ['MAIL_PORT', 'http'],
    ['MAIL_PORT', '99999'],
    ['DATABASE_URL', 'not a url'],
    ['DATABASE_URL', 'mysql://db/isp'],
    ['DATABASE_URL', 'redis://127.0.0.1:6379'],
    ['REDIS_URL', '127.0.0.1:6379'],
    ['REDIS_URL', 'http://cache'],
    ['PUBLIC_BASE_URL', 'ftp://example.test'],
    ['MAIL_BASE_URL', 'example.test'],
    ['APP_KEY', 'short'],
    ['APP_KEY', 'ab'.repeat(31)],
    ['APP_KEY', Buffer.alloc(16).toString('base64')],
    ['APP_KEY', 'zz'.repeat(32)],
    ['LOG_LEVEL', 'verbose'],
    ['LOG_LEVEL', 'INFO'],
    ['EXTERNAL_RATE_LIMIT', '0'],
    ['EXTERNAL_RATE_LIMIT', 'many'],
  ];
  for (const [name, value] of malformed) {
    it(`refuses ${name}=${JSON.stringify(value.length > 20 ? `${value.slice(0, 20)}...` : value)} with a ConfigError naming ${name}`, () => {
      const err = configError(() => loadConfig({ [name]: value }));
      expect(err.message.startsWith(name)).to.equal(true);
    });
  }

  it('never echoes an APP_KEY or a database password in its messages', () => {
    const err = configError(() => loadConfig({ APP_KEY: 'my-secret-key-value' }));
    expect(err.message).not.to.include('my-secret-key-value');
    const url = configError(() => loadConfig({ DATABASE_URL: 'mysql://user:hunter2@db/isp' }));
    expect(url.message).not.to.include('hunter2');
  });

  it('accepts APP_KEY as 64 hex characters, base64 and "base64:"-prefixed base64 of 32 bytes', () => {
    const key = Buffer.from(HEX_KEY, 'hex');
    expect(parseAppKey(HEX_KEY).equals(key)).to.equal(true);
    expect(parseAppKey(key.toString('base64')).equals(key)).to.equal(true);
    expect(parseAppKey(`base64:${key.toString('base64')}`).equals(key)).to.equal(true);
  });

  it('loadServerConfig requires DATABASE_URL, REDIS_URL and APP_KEY, naming the missing one', () => {
    expect(loadServerConfig(SERVER_ENV).databaseUrl).to.equal(SERVER_ENV.DATABASE_URL);
    for (const name of Object.keys(SERVER_ENV) as (keyof typeof SERVER_ENV)[]) {
      const err = configError(() => loadServerConfig({ ...SERVER_ENV, [name]: '' }));
      expect(err.message).to.equal(`${name} is required`);
    }
    expect(configError(() => loadServerConfig({ ...SERVER_ENV, PORT: 'x' })).message).to.match(/^PORT /);
  });

  it('getters of the launchers and infrastructure helpers: defaults, values, empty as unset', () => {
    expect(dataDirSetting({})).to.equal('.data');
    expect(dataDirSetting({ DATA_DIR: '' })).to.equal('.data');
    expect(dataDirSetting({ DATA_DIR: '/srv/isp data' })).to.equal('/srv/isp data');
    expect(loadConfig({ DATA_DIR: 'other' }).dataDir).to.equal('other');
    expect(stateDirSetting({})).to.equal(undefined);
    expect(stateDirSetting({ ISP_STATE_DIR: '' })).to.equal(undefined);
    expect(stateDirSetting({ ISP_STATE_DIR: '/srv/state' })).to.equal('/srv/state');
    expect(cacheDirSetting({ ISP_CACHE_DIR: '' })).to.equal(undefined);
    expect(cacheDirSetting({ ISP_CACHE_DIR: '/srv/cache' })).to.equal('/srv/cache');
    expect(searchPath({})).to.equal('');
    expect(searchPath({ PATH: '/usr/bin:/bin' })).to.equal('/usr/bin:/bin');
    expect(colorWanted({ isTTY: true }, {})).to.equal(true);
    expect(colorWanted({ isTTY: true }, { NO_COLOR: '' })).to.equal(true);
    expect(colorWanted({ isTTY: true }, { NO_COLOR: '1' })).to.equal(false);
    expect(colorWanted({ isTTY: false }, {})).to.equal(false);
    expect(colorWanted({}, {})).to.equal(false);
    expect(isDevSupervisor({ ISP_DEV_SUPERVISOR: '1' })).to.equal(true);
    expect(isDevSupervisor({ ISP_DEV_SUPERVISOR: 'yes' })).to.equal(false);
    expect(isDevSupervisor({})).to.equal(false);
  });

  it('databaseUrlSetting validates DATABASE_URL alone, like loadConfig', () => {
    expect(databaseUrlSetting({})).to.equal(undefined);
    expect(databaseUrlSetting({ DATABASE_URL: SERVER_ENV.DATABASE_URL, PORT: 'x' })).to.equal(SERVER_ENV.DATABASE_URL);
    expect(configError(() => databaseUrlSetting({ DATABASE_URL: 'mysql://h/db' })).message).to.match(/^DATABASE_URL /);
  });
});
