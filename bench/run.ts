/**
 * `npm run bench -- <name>`: runs one benchmark of bench/ (not part of npm test). Each prints its
 * figures and the ratios against a baseline measured in the same run (developers' guide).
 */
const benches: Record<string, () => Promise<{ run(args: string[]): Promise<void> }>> = {
  'external-list': () => import('./external-list.js'),
  'mailbox-list': () => import('./mailbox-list.js'),
  'billing-cycle': () => import('./billing-cycle.js'),
  'admin-customers': () => import('./admin-customers.js'),
  'wabot-throttle': () => import('./wabot-throttle.js'),
  'supplier-import': () => import('./supplier-import.js'),
  'tenant-db-copy': () => import('./tenant-db-copy.js'),
  'write-gate': () => import('./write-gate.js'),
};

const [name, ...args] = process.argv.slice(2);
if (!name || !benches[name]) {
  console.error(`usage: npm run bench -- <${Object.keys(benches).join('|')}>`);
  process.exit(2);
}
benches[name]()
  .then((m) => m.run(args))
  .then(
    () => process.exit(0),
    (err) => {
      console.error(err);
      process.exit(1);
    },
  );
