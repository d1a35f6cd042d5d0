import { expect } from 'chai';
import { ConfigError, loadConfig } from '../../lib/config.js';
import { resolveToolchain, javaMajor, type HealthItem } from '../../jobs/apk/toolchain.js';

/** Issue 12: the app builder's settings and the toolchain choice. */
describe('app builder configuration (APK_*) and the toolchain choice', () => {
  it('defaults: auto, 1 build per worker, 20 minutes, no SDK, not under npm start', () => {
    expect(loadConfig({}).apk).to.deep.equal({
      toolchain: 'auto',
      concurrency: 1,
      timeoutMs: 1_200_000,
      forceKillAfterMs: 10_000,
      androidHome: undefined,
      javaHome: undefined,
      devLauncher: false,
      stubEnv: {},
    });
  });

  it('reads APK_TOOLCHAIN, the limits, the SDK, ISP_DEV_LAUNCHER and the stub switches; refuses a bad value', () => {
    const apk = loadConfig({
      APK_TOOLCHAIN: 'stub',
      APK_BUILD_CONCURRENCY: '2',
      APK_BUILD_TIMEOUT_MS: '60000',
      APK_FORCE_KILL_AFTER_MS: '2000',
      ANDROID_SDK_ROOT: '/opt/sdk',
      JAVA_HOME: '/usr/lib/jvm/java-17',
      ISP_DEV_LAUNCHER: '1',
      APK_STUB_HANG: '1',
    }).apk;
    expect(apk).to.deep.equal({
      toolchain: 'stub',
      concurrency: 2,
      timeoutMs: 60_000,
      forceKillAfterMs: 2000,
      androidHome: '/opt/sdk',
      javaHome: '/usr/lib/jvm/java-17',
      devLauncher: true,
      stubEnv: { APK_STUB_HANG: '1' },
    });
    expect(() => loadConfig({ APK_TOOLCHAIN: 'gradle' })).to.throw(ConfigError, 'APK_TOOLCHAIN');
    expect(() => loadConfig({ APK_BUILD_CONCURRENCY: '0' })).to.throw(ConfigError, 'APK_BUILD_CONCURRENCY');
  });

  it('auto: real when java, keytool and the SDK are ok; else the stub only under npm start', () => {
    const item = (name: HealthItem['name'], ok: boolean): HealthItem => ({
      name,
      status: ok ? 'ok' : 'missing',
      version: null,
      path: null,
      hint: null,
    });
    const ready = [item('java', true), item('keytool', true), item('android_sdk', true)];
    const noSdk = [item('java', true), item('keytool', true), item('android_sdk', false)];
    expect(resolveToolchain('auto', ready, false)).to.equal('real');
    expect(resolveToolchain('auto', noSdk, true)).to.equal('stub');
    expect(resolveToolchain('auto', noSdk, false)).to.equal('real');
    expect(resolveToolchain('stub', ready, false)).to.equal('stub');
    expect(resolveToolchain('real', noSdk, true)).to.equal('real');
  });

  it('reads the Java major version from java -version', () => {
    expect(javaMajor('openjdk version "17.0.15" 2025-04-15')).to.equal(17);
    expect(javaMajor('java version "1.8.0_392"')).to.equal(8);
    expect(javaMajor('openjdk version "21" 2023-09-19')).to.equal(21);
    expect(javaMajor('nothing')).to.equal(null);
  });
});
