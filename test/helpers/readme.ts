/**
 * Reading the README's walk-throughs for the tests that run them (test/integration/readme-*.test.ts):
 * a walk-through is the first ```sh block under a heading, and its "What you see" block the first
 * plain ``` block after it. Each line of that block must match the output's line, where `...` inside
 * a line stands for any text and a line that is just `...` for any number of lines.
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
