// Lint: typescript-eslint's recommended rules plus the limits STYLE.md asks for.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['node_modules/**', 'charts/**', 'crds/*.yaml', 'coverage/**', '.*/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts'],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'max-depth': ['error', 4],
      'max-params': ['error', 5],
    },
  },
  {
    files: ['**/*.test.ts', 'test/**/*.ts'],
    rules: { 'max-params': 'off' },
  },
);
