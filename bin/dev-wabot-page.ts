import type { Arrival } from './dev-wabot.js';

/** The fake gateway's page (issue 10 item 6): every arrival, newest first, labelled FAKE. */

const esc = (s: string) =>
  s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

/**
 * Renders the HTML page (reloads itself every 2 s).
 * @param arrivals newest first
 * @param refusedOnce the number whose first send is refused, for the explanation
 */
export function renderArrivalsPage(arrivals: readonly Arrival[], refusedOnce: string): string {
  const rows = arrivals
    .map(
      (a) => `<tr class="${a.result}">
  <td>${a.seq}</td><td>${esc(new Date(a.at).toISOString())}</td>
  <td>${a.gapMs === null ? '-' : `+${(a.gapMs / 1000).toFixed(2)} s`}</td>
  <td>${esc(a.device)}</td><td>${a.isGroup ? 'group ' : ''}${esc(a.phone)}</td>
  <td>${esc(a.message)}</td>
  <td>${a.result === 'accepted' ? `accepted <code>${esc(a.id ?? '')}</code>` : `refused: ${esc(a.reason ?? '')}`}</td>
</tr>`,
    )
    .join('\n');
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta http-equiv="refresh" content="2">
<title>FAKE wablas gateway</title>
<style>
body{font-family:system-ui,sans-serif;margin:1.5rem}
.banner{background:#b00020;color:#fff;padding:.6rem 1rem;font-weight:bold;font-size:1.2rem}
table{border-collapse:collapse;margin-top:1rem;width:100%}
td,th{border:1px solid #ccc;padding:.3rem .5rem;text-align:left;vertical-align:top;font-size:.9rem}
tr.refused{background:#fde8e8}
</style></head>
<body>
<div class="banner">FAKE wablas gateway: nothing is delivered to WhatsApp</div>
<p>Every send that reached this loopback server, newest first, with its arrival time and the gap
since the same device's previous send (the pace the chat bot keeps). The first send to
<code>${esc(refusedOnce)}</code> is refused; later ones are accepted. JSON: <a href="/arrivals.json">/arrivals.json</a>.</p>
<p>${arrivals.length} arrival(s).</p>
<table><thead><tr><th>#</th><th>arrived (UTC)</th><th>gap</th><th>device</th><th>to</th><th>message</th><th>result</th></tr></thead>
<tbody>
${rows || '<tr><td colspan="7">Nothing has arrived yet.</td></tr>'}
</tbody></table>
</body></html>
`;
}
