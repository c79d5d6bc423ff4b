// A small rule set that needs type information: promises nobody awaits, names nobody uses, and
// imports that exist only for types (so the emitted JavaScript never loads a module for nothing).
import tseslint from 'typescript-eslint';

export default [
  { ignores: ['dist/', 'node_modules/', 'test/fixtures/'] },
  {
    files: ['**/*.ts'],
    languageOptions: {
      parser: tseslint.parser,
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    plugins: { '@typescript-eslint': tseslint.plugin },
    rules: {
      // node:test's describe/it/test return promises the runner itself tracks.
      '@typescript-eslint/no-floating-promises': [
        'error',
        { allowForKnownSafeCalls: [{ from: 'package', package: 'node:test', name: ['describe', 'it', 'test', 'suite'] }] },
      ],
      // `const { omitted: _x, ...rest } = o` drops a key; `_`-arguments keep a signature's arity (error middleware).
      '@typescript-eslint/no-unused-vars': ['error', { ignoreRestSiblings: true, argsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
    },
  },
];
