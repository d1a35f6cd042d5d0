import { createRequire } from 'node:module';
const require = createRequire(import.meta.url);
const t = process.cpuUsage(); const w = performance.now();
for (const m of process.argv.slice(2)) await import(m);
const u = process.cpuUsage(t);
const keys = Object.keys(require('node:module')._cache);
const c = new Map<string, number>();
for (const k of keys) { const m = /node_modules\/((@[^/]+\/)?[^/]+)/.exec(k); const n = m ? m[1] : 'x'; c.set(n, (c.get(n) ?? 0) + 1); }
console.log(((u.user+u.system)/1000).toFixed(0), 'ms cpu', (performance.now()-w).toFixed(0), 'ms wall', keys.length, 'cjs:', [...c.entries()].sort((a, b) => b[1] - a[1]).slice(0, 12).map(([k, v]) => `${v} ${k}`).join(', '));
