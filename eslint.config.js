// ESLint: the recommended rules of ESLint and typescript-eslint, with the few changes below, each
// for a reason given beside it. Formatting is Prettier's (prettier.config.js), not ESLint's.
//
// Not type-aware: with type information (recommendedTypeChecked) a run costs about five times
// the CPU (57 s against 12 s, measured on the two-core development machine) and, on this tree,
// found no bug the compiler and the tests had not: its promise rules (no-floating-promises,
// no-misused-promises, await-thenable) flagged only deliberate fire-and-forget handlers and
// harmless awaits. `npx tsc --noEmit` remains the type check.
import js from '@eslint/js';
import { defineConfig } from 'eslint/config';
import tseslint from 'typescript-eslint';

/** Node's globals that the plain JavaScript files (setup scripts, CI, the CLI shim) use. */
const nodeGlobals = {
  process: 'readonly',
  console: 'readonly',
  URL: 'readonly',
  setTimeout: 'readonly',
  clearTimeout: 'readonly',
  performance: 'readonly',
  fetch: 'readonly',
};

export default defineConfig(
  // Beside .gitignore's (node_modules, .tools, .driftline, dist, web/dist), which ESLint does not read.
  { ignores: ['node_modules/', '.tools/', '.driftline/', 'dist/', 'dist.*/', 'web/dist/', 'coverage/', 'test/fixtures/'] },
  js.configs.recommended,
  tseslint.configs.recommended,
  {
    rules: {
      // A leading underscore marks a binding kept on purpose: a field dropped from a rest copy
      // (`{ secret: _omitted, ...rest }`), a parameter a signature must have. Rest siblings are
      // the idiom for leaving fields out of a copy.
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrorsIgnorePattern: '^_', ignoreRestSiblings: true },
      ],
      // Off: every error thrown from a `catch` here translates the caught one into a sentence for
      // the user that already names its cause (`cannot read corpus X: <why>`); the CLI prints
      // the message alone and Temporal failures carry it. A `cause` would repeat it, and could
      // carry what JSON.parse quotes of a file the message deliberately does not echo.
      'preserve-caught-error': 'off',
      // A `let` that a cleanup closure reads before it is assigned (infra/start.ts stops what
      // was started so far) cannot be a `const` declared at its assignment.
      'prefer-const': ['error', { ignoreReadBeforeAssign: true }],
    },
  },
  {
    files: ['**/*.{js,mjs,cjs}'],
    languageOptions: { globals: nodeGlobals },
  },
  {
    files: ['**/*.cjs'],
    languageOptions: { sourceType: 'commonjs', globals: { module: 'writable', require: 'readonly' } },
  },
  {
    // Tests walk untyped JSON (schemas, replies) and assert its shape; product code has no `any`.
    files: ['test/**/*.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
);
