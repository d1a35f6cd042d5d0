import { RuleTester, type Rule } from 'eslint';
import tseslint from 'typescript-eslint';

// A JS module without type declarations: a non-literal specifier keeps tsc from looking for them.
const rulePath = '../../eslint-rules/no-unexplained-cast.js';
const { default: rule } = (await import(rulePath)) as { default: Rule.RuleModule };

const tester = new RuleTester({ languageOptions: { parser: tseslint.parser } });

/** eslint-rules/no-unexplained-cast.js: `as never` / `as unknown as` only with a comment saying why. */
describe('eslint rule local/no-unexplained-cast', () => {
  tester.run('no-unexplained-cast', rule, {
    valid: [
      'const a = x as string;',
      'const a = x as unknown;',
      'const a = x as unknown as string; // koa types lag behind koa 3',
      { name: 'comment on the line before', code: '// koa types lag behind koa 3\nconst a = x as unknown as string;' },
      {
        name: 'block comment ending on the line before',
        code: '/**\n * the adapter is typed for koa 2\n */\nconst a = x as never;',
      },
      'use(mw as never); // bull-board ships koa 2 types',
      'const a = <string><unknown>x; // old syntax, still explained',
      {
        name: 'comment on the line before the cast inside a call',
        code: 'const a = f(\n  // explained on the line before the type\n  x as unknown as string,\n);',
      },
    ],
    invalid: [
      { code: 'const a = x as never;', errors: [{ messageId: 'never' }] },
      { code: 'const a = x as unknown as string;', errors: [{ messageId: 'unknownAs' }] },
      { code: 'const a = (x as unknown) as Record<string, number>;', errors: [{ messageId: 'unknownAs' }] },
      { code: 'const a = <string><unknown>x;', errors: [{ messageId: 'unknownAs' }] },
      // a trailing comment of the previous statement is about that statement
      {
        name: 'trailing comment of the previous line',
        code: 'app.silent = true; // quiet\nuse(mw as never);',
        errors: [{ messageId: 'never' }],
      },
      // directives are not reasons
      {
        name: 'eslint directive',
        code: '// eslint-disable-next-line no-console\nconst a = x as never;',
        errors: [{ messageId: 'never' }],
      },
      {
        name: 'ts directive',
        code: '// @ts-ignore\nconst a = x as unknown as string;',
        errors: [{ messageId: 'unknownAs' }],
      },
      // two lines up is too far
      { name: 'comment two lines up', code: '// why\n\nconst a = x as never;', errors: [{ messageId: 'never' }] },
    ],
  });
});
