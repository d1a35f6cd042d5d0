/**
 * Reading the README's curl walk-throughs for the tests that run them verbatim
 * (readme-walkthrough.test.ts, readme-chatbot.test.ts): the script of a section and its "What you
 * see" block, and the pattern that block stands for.
 */

/** The first ```sh block after `heading` and the first plain ``` block after that. */
export function walkThrough(readme: string, heading: string): { script: string; expected: string } {
  const at = readme.indexOf(`\n${heading}\n`);
  if (at < 0) throw new Error(`README has no "${heading}"`);
  const rest = readme.slice(at);
  const sh = rest.match(/```sh\n([\s\S]*?)```/);
  if (!sh) throw new Error(`no sh block under "${heading}"`);
  const afterSh = rest.slice(sh.index! + sh[0].length);
  const out = afterSh.match(/```\n([\s\S]*?)```/);
  if (!out) throw new Error(`no output block under "${heading}"`);
  return { script: sh[1], expected: out[1] };
}

/**
 * A regular expression for a "What you see" block (see the file comment), anchored at both ends.
 * @param expected the block's text
 */
export function outputPattern(expected: string): RegExp {
  const esc = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const lines = expected.replace(/\n$/, '').split('\n');
  const body = lines
    .map((l) => (l.trim() === '...' ? '(?:[^\\n]*\\n)*?' : `${esc(l).split(esc('...')).join('[^\\n]*?')}\\n`))
    .join('');
  return new RegExp(`^${body}$`);
}
