// Lint: typescript-eslint's recommended rules, the limits STYLE.md asks for, and the layers as import zones (a
// layer that imports upward fails the lint; eslint.config.test.ts proves each zone bites).
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

/**
 * Import zones: a folder, and what its files must not import (module names, or path globs of relative imports). A
 * folder inherits the zones of the folders above it (flat config would otherwise let the last rule options win).
 */
export const ZONES = [
  {
    dir: 'gateway',
    group: ['**/operator/**', '**/console/**', '**/billing/**'],
    message: 'The gateway never imports the operator or the console or billing (the standalone entry point alone mounts the console and billing).',
  },
  {
    dir: 'gateway/pipeline',
    names: ['fastify', 'fastify-plugin', 'node:http'],
    group: ['**/http/**'],
    message: 'The call pipeline has no HTTP in it: transports live in gateway/http and reach it through runCall and a CallSink.',
  },
  {
    dir: 'gateway/mcp',
    names: ['fastify', 'fastify-plugin', 'node:http'],
    group: ['**/http/**'],
    message: 'The MCP gateway has no HTTP framework in it: gateway/http/mcp-routes.ts writes its answers (McpAnswer).',
  },
  {
    dir: 'gateway/contract',
    names: ['ioredis', 'fastify', '@kubernetes/client-node', 'pg'],
    group: ['**/state/**', '**/http/**', '**/pipeline/**'],
    message: 'The contract is pure: no I/O clients and no data-plane modules at run time (type imports are allowed).',
    typesAllowed: true,
  },
  {
    dir: 'console',
    group: ['**/operator/**', '**/gateway/pipeline/**', '**/gateway/http/**', '**/gateway/providers/**', '**/gateway/translate/**', '**/gateway/server.ts'],
    message: 'The console uses the contract, the stores and the usage tables, never the operator or the call path (pipeline, HTTP, providers, translators).',
  },
  {
    dir: 'billing',
    group: [
      '**/console/**',
      '**/operator/**',
      '**/gateway/pipeline/**',
      '**/gateway/http/**',
      '**/gateway/providers/**',
      '**/gateway/translate/**',
      '**/gateway/server.ts',
    ],
    message:
      'Billing is a domain of its own: it uses the contract, the stores (the ledger), the usage tables and availability, never the console (which renders billing), the operator or the call path.',
  },
  {
    dir: 'operator',
    group: ['**/state/redis-store.ts', '**/state/memory-store.ts', '**/gateway/pipeline/**', '**/gateway/http/**'],
    message: 'The operator uses the state through its narrow port (gateway/state/operator-state.ts), never the stores, the pipeline or HTTP.',
  },
  {
    dir: 'gateway/state',
    group: ['**/usage/exporter/**', '**/http/**', '**/pipeline/**'],
    message: 'The state store does not depend on the exporter, HTTP or the pipeline.',
  },
];

/** Files that compose the layers (the standalone process serves the console and billing next to the API). */
const COMPOSERS = ['gateway/main.ts', 'gateway/standalone-mode.ts'];

function restriction(zones) {
  return [
    'error',
    {
      paths: zones.flatMap((z) => (z.names ?? []).map((name) => ({ name, message: z.message, allowTypeImports: z.typesAllowed === true }))),
      patterns: zones.map((z) => ({ group: z.group, message: z.message, allowTypeImports: z.typesAllowed === true })),
    },
  ];
}

function zoneConfigs() {
  const configs = ZONES.map((z) => ({
    files: [`${z.dir}/**/*.ts`],
    ignores: ['**/*.test.ts'],
    rules: { '@typescript-eslint/no-restricted-imports': restriction(ZONES.filter((a) => z.dir === a.dir || z.dir.startsWith(`${a.dir}/`))) },
  }));
  const operatorOnly = { ...ZONES[0], group: ['**/operator/**'], message: 'The gateway never imports the operator.' };
  return [...configs, { files: COMPOSERS, rules: { '@typescript-eslint/no-restricted-imports': restriction([operatorOnly]) } }];
}

export default tseslint.config(
  { ignores: ['node_modules/**', 'charts/**', 'crds/*.yaml', 'coverage/**', '.*/**', 'test/mcp/testdata/**'] },
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
      '@typescript-eslint/switch-exhaustiveness-check': ['error', { considerDefaultExhaustiveForUnions: true }],
    },
  },
  ...zoneConfigs(),
  // The SDK examples are plain JavaScript modules a user runs with node.
  { files: ['examples/**/*.mjs'], languageOptions: { globals: { process: 'readonly', console: 'readonly' } } },
  {
    files: ['**/*.test.ts', 'test/**/*.ts'],
    rules: { 'max-params': 'off' },
  },
);
