// The stub toolchain (issue 12 item 10): stands in for `./gradlew --no-daemon --console=plain
// assembleDebug|assembleRelease` on machines without a JDK and Android SDK (tests, `npm start`).
// It prints Gradle-like `> Task` lines with delays, keeps a child process running beside it (as
// Gradle keeps workers), and writes a small zip as the APK. It is labelled: the APK holds
// STUB-BUILD.txt and every build using it is marked `toolchain: stub`.
//
// Switches (environment):
//   APK_STUB_TASK_DELAY_MS   delay per task in ms (default 120)
//   APK_STUB_FAIL_AT         a task name (or part of one): print an error there and exit 1
//   APK_STUB_HANG            1: stop printing after a few tasks and never finish
//   APK_STUB_IGNORE_SIGTERM  1: the stub and its child ignore SIGTERM (only SIGKILL stops them)
//   APK_STUB_ECHO_SECRET     1: print the signing passwords (tests check the builder redacts them)
//   APK_STUB_HOLD_FILE       a path: while that file exists, the stub waits before each task (a test holds
//                            one build in `running` for as long as it needs, whatever the machine's load)
'use strict';
const fs = require('node:fs');
const path = require('node:path');
const { spawn } = require('node:child_process');

const args = process.argv.slice(2);
const assemble = args.find((a) => /^assemble(Debug|Release)$/.test(a));
if (!assemble) {
  console.error('stub gradlew: expected assembleDebug or assembleRelease, got ' + args.join(' '));
  process.exit(2);
}
const variant = assemble === 'assembleRelease' ? 'release' : 'debug';
const Variant = variant[0].toUpperCase() + variant.slice(1);
const delay = Number(process.env.APK_STUB_TASK_DELAY_MS || 120);
const failAt = process.env.APK_STUB_FAIL_AT || '';
const hang = process.env.APK_STUB_HANG === '1';
const ignoreTerm = process.env.APK_STUB_IGNORE_SIGTERM === '1';
const holdFile = process.env.APK_STUB_HOLD_FILE || '';

if (ignoreTerm) process.on('SIGTERM', () => console.log('stub gradlew: SIGTERM ignored'));

// a worker process beside the "daemon", in the same process group
const child = spawn(
  process.execPath,
  ['-e', `${ignoreTerm ? "process.on('SIGTERM', () => {});" : ''} setInterval(() => {}, 1000);`],
  { stdio: 'ignore' },
);
console.log(`Starting Gradle stub worker (pid ${child.pid})`);

const tasks = [
  'preBuild',
  `pre${Variant}Build`,
  `generate${Variant}BuildConfig`,
  `check${Variant}AarMetadata`,
  `generate${Variant}ResValues`,
  `map${Variant}SourceSetPaths`,
  `generate${Variant}Resources`,
  `merge${Variant}Resources`,
  `package${Variant}Resources`,
  `process${Variant}MainManifest`,
  `process${Variant}Manifest`,
  `process${Variant}Resources`,
  `compile${Variant}JavaWithJavac`,
  `merge${Variant}Assets`,
  `dexBuilder${Variant}`,
  `merge${Variant}Dex`,
  `merge${Variant}JniLibFolders`,
  `validateSigning${Variant}`,
  `package${Variant}`,
  `create${Variant}ApkListingFileRedirect`,
  `assemble${Variant}`,
];

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function readProps(file) {
  const out = {};
  if (!fs.existsSync(file)) return out;
  for (const line of fs.readFileSync(file, 'latin1').split(/\r?\n/)) {
    const m = /^([^#!][^=]*)=(.*)$/.exec(line);
    if (m) out[m[1].trim()] = m[2];
  }
  return out;
}

// A minimal zip (stored entries) with CRC-32, so the "APK" opens with any unzip tool.
const CRC = new Int32Array(256).map((_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c;
});
function crc32(buf) {
  let c = -1;
  for (const b of buf) c = CRC[(c ^ b) & 0xff] ^ (c >>> 8);
  return (c ^ -1) >>> 0;
}
function zip(entries) {
  const parts = [];
  const central = [];
  let offset = 0;
  for (const [name, data] of entries) {
    const n = Buffer.from(name);
    const crc = crc32(data);
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(10, 4);
    local.writeUInt32LE(crc, 14);
    local.writeUInt32LE(data.length, 18);
    local.writeUInt32LE(data.length, 22);
    local.writeUInt16LE(n.length, 26);
    const cen = Buffer.alloc(46);
    cen.writeUInt32LE(0x02014b50, 0);
    cen.writeUInt16LE(20, 4);
    cen.writeUInt16LE(10, 6);
    cen.writeUInt32LE(crc, 16);
    cen.writeUInt32LE(data.length, 20);
    cen.writeUInt32LE(data.length, 24);
    cen.writeUInt16LE(n.length, 28);
    cen.writeUInt32LE(offset, 42);
    parts.push(local, n, data);
    central.push(cen, n);
    offset += 30 + n.length + data.length;
  }
  const cd = Buffer.concat(central);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(entries.length, 8);
  end.writeUInt16LE(entries.length, 10);
  end.writeUInt32LE(cd.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...parts, cd, end]);
}

async function main() {
  const root = process.cwd();
  const props = readProps(path.join(root, 'apk.properties'));
  console.log('> Configure project :app');
  console.log(`stub: applicationId=${props.application_id || '?'} versionCode=${props.version_code || '?'}`);
  if (process.env.APK_STORE_FILE) {
    const ok = fs.existsSync(process.env.APK_STORE_FILE);
    console.log(
      `stub: signing with key ${process.env.APK_KEY_ALIAS || '?'} (${ok ? 'keystore present' : 'keystore MISSING'})`,
    );
    if (process.env.APK_STUB_ECHO_SECRET === '1')
      console.log(`stub: storePassword=${process.env.APK_STORE_PASSWORD} keyPassword ${process.env.APK_KEY_PASSWORD}`);
  } else console.log('stub: unsigned (no keystore given)');
  for (let i = 0; i < tasks.length; i++) {
    const t = tasks[i];
    if (hang && i === 4) {
      console.log('stub: hanging (APK_STUB_HANG=1)');
      await new Promise(() => setInterval(() => {}, 1000));
    }
    while (holdFile && fs.existsSync(holdFile)) await sleep(50);
    console.log(`> Task :app:${t}${i < 2 ? ' UP-TO-DATE' : ''}`);
    if (failAt && t.toLowerCase().includes(failAt.toLowerCase())) {
      console.log(`> Task :app:${t} FAILED`);
      console.error('');
      console.error('FAILURE: Build failed with an exception.');
      console.error('');
      console.error('* What went wrong:');
      console.error(`Execution failed for task ':app:${t}'.`);
      console.error('> stub failure requested by APK_STUB_FAIL_AT');
      console.error('');
      console.error('BUILD FAILED in 1s');
      child.kill('SIGKILL');
      process.exit(1);
    }
    await sleep(delay);
  }
  const assets = path.join(root, 'app', 'src', 'main', 'assets');
  const read = (f) => (fs.existsSync(f) ? fs.readFileSync(f) : Buffer.from(''));
  const entries = [
    ['STUB-BUILD.txt', Buffer.from('Built by the stub toolchain (templates/android-stub): not an installable app.\n')],
    ['apk.properties', read(path.join(root, 'apk.properties'))],
    ['res/values/config.xml', read(path.join(root, 'app', 'src', 'main', 'res', 'values', 'config.xml'))],
    ['assets/app-config.json', read(path.join(assets, 'app-config.json'))],
    ['assets/offline.html', read(path.join(assets, 'offline.html'))],
  ];
  const out = path.join(root, 'app', 'build', 'outputs', 'apk', variant);
  fs.mkdirSync(out, { recursive: true });
  fs.writeFileSync(path.join(out, `app-${variant}.apk`), zip(entries));
  child.kill('SIGKILL');
  console.log('');
  console.log(`BUILD SUCCESSFUL in ${((tasks.length * delay) / 1000).toFixed(1)}s`);
  console.log(`${tasks.length} actionable tasks: ${tasks.length - 2} executed, 2 up-to-date`);
}

main().catch((e) => {
  console.error(e && e.stack ? e.stack : String(e));
  child.kill('SIGKILL');
  process.exit(1);
});
