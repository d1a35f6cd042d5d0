// The template's JavaScript step (`npm run build`): reads config.json (written by the app builder
// with JSON.stringify) and writes app/src/main/assets/app-config.json and offline.html. No
// dependencies; every value reaches the page through escapeHtml or JSON.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const assets = path.resolve(here, '..', 'app', 'src', 'main', 'assets');
const config = JSON.parse(fs.readFileSync(path.join(here, 'config.json'), 'utf8'));

const escapeHtml = (s) =>
  String(s).replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]);
const color = /^#[0-9A-Fa-f]{6}$/.test(config.theme_color) ? config.theme_color : '#0D6EFD';

fs.mkdirSync(assets, { recursive: true });
fs.writeFileSync(path.join(assets, 'app-config.json'), JSON.stringify(config, null, 2) + '\n');
fs.writeFileSync(
  path.join(assets, 'offline.html'),
  `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(config.app_name)}</title>
<style>
body { font-family: sans-serif; margin: 0; display: flex; min-height: 100vh; align-items: center; justify-content: center; }
main { text-align: center; padding: 2rem; }
h1 { color: ${color}; }
a { display: inline-block; margin-top: 1rem; padding: .6rem 1.2rem; background: ${color}; color: #fff; border-radius: .4rem; text-decoration: none; }
</style>
</head>
<body>
<main>
<h1>${escapeHtml(config.app_name)}</h1>
<p>You are offline. Check your connection and try again.</p>
<a href="${escapeHtml(config.start_url)}">Try again</a>
</main>
</body>
</html>
`,
);
console.log(`web: wrote app-config.json and offline.html for ${config.app_type} (${config.application_id})`);
