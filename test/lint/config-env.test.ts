import { expect } from 'chai';
import { ESLint } from 'eslint';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/** The rule ids of the errors ESLint, with the repository's config, reports for `code` as the file `file`. */
async function errorsOf(eslint: ESLint, code: string, file: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath: path.join(ROOT, file) });
  return result.messages.filter((m) => m.severity === 2).map((m) => String(m.ruleId));
}

/** eslint.config.js: only lib/config.ts reads process.env (issue 6 item 6); a new reader fails npm test. */
describe('eslint: process.env only in lib/config.ts', () => {
  const eslint = new ESLint({ cwd: ROOT });
  const reader = 'export const port = process.env.PORT;\n';

  it('refuses process.env and its destructuring outside lib/config.ts', async () => {
    for (const file of ['lib/infra/new-helper.ts', 'api/new-module/service.ts', 'bin/new-tool.ts', 'bench/x.ts']) {
      expect(await errorsOf(eslint, reader, file), file).to.deep.equal(['no-restricted-properties']);
    }
    expect(await errorsOf(eslint, 'const { env } = process;\nexport const e = env;\n', 'jobs/x.ts')).to.deep.equal([
      'no-restricted-properties',
    ]);
  });

  it("refuses `import { env } from 'node:process'` too", async () => {
    const code = "import { env } from 'node:process';\nexport const port = env.PORT;\n";
    expect(await errorsOf(eslint, code, 'workers/x.ts')).to.deep.equal(['no-restricted-imports']);
  });

  it('allows lib/config.ts and the tests', async () => {
    expect(await errorsOf(eslint, reader, 'lib/config.ts')).to.deep.equal([]);
    expect(await errorsOf(eslint, reader, 'test/helpers/x.ts')).to.deep.equal([]);
  });
});
