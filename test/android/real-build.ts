/**
 * `npm run test:android` (issue 12 item 4; outside `npm test`): builds templates/android-app with the
 * real toolchain, a JDK 17 and the Android SDK of ANDROID_HOME, exactly as the apk-build processor
 * does (values through the escapers, a keytool debug key, `npm run build` in web/, `./gradlew
 * --no-daemon --console=plain assembleDebug`), then checks the APK with `aapt2 dump badging`:
 * package name, versionCode, versionName and the label carrying the hostile test name.
 * Without Java 17, keytool or a complete SDK it prints "skipped: <why>" and exits 0.
 * Needs network access on the first run (Gradle and the Android Gradle Plugin are downloaded).
 */
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import { checkHealth } from '../../jobs/apk/toolchain.js';
import { TEMPLATE_DIR } from '../../jobs/apk/options.js';
import { writeTemplateValues, type BuildConfig } from '../../jobs/apk/values.js';
import { generateKeystore } from '../../jobs/apk/default-signing.js';

const androidHome = process.env.ANDROID_HOME || process.env.ANDROID_SDK_ROOT;
const health = await checkHealth({ mode: 'real', androidHome, javaHome: process.env.JAVA_HOME });
const missing = health.items.filter(
  (i) => ['java', 'keytool', 'android_sdk', 'npm'].includes(i.name) && i.status !== 'ok',
);
if (missing.length) {
  console.log(`skipped: ${missing.map((i) => `${i.name} ${i.status} (${i.hint})`).join('; ')}`);
  process.exit(0);
}

const name = `A'b"c<d>&\\@x \${y}`;
const config: BuildConfig = {
  app_type: 'portal',
  app_name: name,
  package_id: 'id.test.realbuild',
  version_name: '1.2.3',
  version_code: 42,
  base_url: 'https://example.com',
  api_url: null,
  environment: 'production',
  theme_color: '#0D6EFD',
  orientation: 'portrait',
  signing_mode: 'debug',
};
const work = await fs.mkdtemp(path.join(os.tmpdir(), 'apk-real-'));
const project = path.join(work, 'project');
await fs.cp(TEMPLATE_DIR, project, { recursive: true });
await writeTemplateValues(project, config);
const key = await generateKeystore(work, { alias: 'androiddebugkey', commonName: 'Android Debug' });
const env = {
  ...process.env,
  ANDROID_HOME: androidHome!,
  APK_STORE_FILE: key.storeFile,
  APK_STORE_TYPE: key.storeType,
  APK_STORE_PASSWORD: key.storePassword,
  APK_KEY_ALIAS: key.keyAlias,
  APK_KEY_PASSWORD: key.keyPassword,
};
await execa('npm', ['run', 'build'], { cwd: path.join(project, 'web'), env, stdio: 'inherit' });
await execa('./gradlew', ['--no-daemon', '--console=plain', 'assembleDebug'], { cwd: project, env, stdio: 'inherit' });
const apk = path.join(project, 'app', 'build', 'outputs', 'apk', 'debug', 'app-debug.apk');
const tools = (await fs.readdir(path.join(androidHome!, 'build-tools'))).filter((t) => t.startsWith('34.')).sort();
const aapt2 = path.join(androidHome!, 'build-tools', tools[tools.length - 1], 'aapt2');
const { stdout } = await execa(aapt2, ['dump', 'badging', apk]);
const checks: [string, boolean][] = [
  ["package name='id.test.realbuild'", stdout.includes("package: name='id.test.realbuild'")],
  ["versionCode='42'", stdout.includes("versionCode='42'")],
  ["versionName='1.2.3'", stdout.includes("versionName='1.2.3'")],
  ['the label is the hostile name', stdout.includes(`application-label:'${name}'`)],
];
for (const [what, ok] of checks) console.log(`${ok ? 'ok  ' : 'FAIL'} ${what}`);
await fs.rm(work, { recursive: true, force: true });
if (checks.some(([, ok]) => !ok)) {
  console.log(stdout);
  process.exit(1);
}
console.log(`built and checked ${path.basename(apk)} with aapt2 dump badging`);
