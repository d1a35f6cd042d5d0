// ESLint flat config: typescript-eslint `recommended` (syntax only, no type information, to stay fast),
// Prettier owns formatting (eslint-config-prettier), plus the house rules of the issue "Lint and format".
import { defineConfig } from 'eslint/config';
import js from '@eslint/js';
import globals from 'globals';
import tseslint from 'typescript-eslint';
import prettier from 'eslint-config-prettier';
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import local from './eslint-rules/index.js';

// `npm run lint` uses --cache, keyed on the config but not on plugin code: hashing the local rules into
// `settings` makes an edit of eslint-rules/ invalidate the cache.
const rulesDir = new URL('./eslint-rules/', import.meta.url);
const localRulesHash = createHash('sha256');
for (const f of readdirSync(rulesDir).sort()) localRulesHash.update(f).update(readFileSync(new URL(f, rulesDir)));

export default defineConfig(
  { ignores: ['node_modules/', '.data/', '.test-data/', 'coverage/', 'tmp/', 'run/'] },
  js.configs.recommended,
  tseslint.configs.recommended,
  prettier,
  {
    languageOptions: {
      ecmaVersion: 2022,
      sourceType: 'module',
      globals: { ...globals.node },
    },
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    settings: { localRulesHash: localRulesHash.digest('hex') },
    plugins: { local },
    rules: {
      // After eslint-config-prettier, which turns max-len off: Prettier wraps code at 120 but not comments or
      // long strings; this catches the rest. Strings, templates, regexes and URLs may run long.
      'max-len': [
        'error',
        {
          code: 120,
          tabWidth: 2,
          ignoreUrls: true,
          ignoreStrings: true,
          ignoreTemplateLiterals: true,
          ignoreRegExpLiterals: true,
        },
      ],
      // `as never` / `as unknown as` only with a comment saying why (eslint-rules/no-unexplained-cast.js).
      'local/no-unexplained-cast': 'error',
      // `any` is visible in review; allowed where a comment says why (eslint-disable-next-line ... -- reason).
      '@typescript-eslint/no-explicit-any': 'warn',
      '@typescript-eslint/no-unused-vars': [
        'error',
        {
          args: 'after-used',
          argsIgnorePattern: '^_',
          varsIgnorePattern: '^_',
          caughtErrors: 'all',
          caughtErrorsIgnorePattern: '^_',
          destructuredArrayIgnorePattern: '^_',
          ignoreRestSiblings: true,
        },
      ],
    },
  },
  {
    // Configuration in one place (issue 6 item 6): lib/config.ts reads and validates every environment variable and
    // builds the environment of child processes (inheritedEnv); everything else gets a Config or a getter's value.
    // Tests may set and pass on variables for the processes they start.
    // templates/: stand-alone programs copied into a build's work directory (the stub toolchain, the web step).
    ignores: ['lib/config.ts', 'test/**', 'templates/**'],
    rules: {
      'no-restricted-properties': [
        'error',
        {
          object: 'process',
          property: 'env',
          message: 'Read configuration through lib/config.ts (loadConfig or a getter); child env: inheritedEnv().',
        },
      ],
      'no-restricted-imports': [
        'error',
        {
          paths: ['process', 'node:process'].map((name) => ({
            name,
            importNames: ['env'],
            message: 'Read configuration through lib/config.ts (loadConfig or a getter); child env: inheritedEnv().',
          })),
        },
      ],
    },
  },
  {
    // Plain JS config and rule files (CommonJS for .cjs).
    files: ['**/*.cjs'],
    languageOptions: { sourceType: 'commonjs' },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
  {
    // mocha tests: describe/it/before... are globals.
    files: ['test/**/*.ts'],
    languageOptions: { globals: { ...globals.mocha } },
  },
);
