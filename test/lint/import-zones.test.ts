// The layers are a test, not a hope: each import zone of eslint.config.js refuses an upward import, and leaves the
// allowed ones alone. Linted as if the text were the named file of the repository.
import { ESLint } from 'eslint';
import { describe, expect, it } from 'vitest';

const eslint = new ESLint({ cwd: new URL('../..', import.meta.url).pathname });

async function restricted(filePath: string, code: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath });
  return (result?.messages ?? []).filter((m) => m.ruleId === '@typescript-eslint/no-restricted-imports').map((m) => m.message);
}

// The first case builds the typed program of the whole tree (about 10 s alone, over a minute on a loaded machine).
describe('import zones', { timeout: 300_000 }, () => {
  it.each([
    ['gateway/pipeline/estimate.ts', "import Fastify from 'fastify';\nexport const f = Fastify;\n", /no HTTP in it/],
    ['gateway/pipeline/estimate.ts', "import { corsHeaders } from '../http/cors.ts';\nexport const c = corsHeaders;\n", /no HTTP in it/],
    ['gateway/pipeline/estimate.ts', "import { x } from '../../operator/operator.ts';\nexport const y = x;\n", /never imports the operator/],
    ['gateway/http/cors.ts', "import { x } from '../../operator/options.ts';\nexport const y = x;\n", /never imports the operator/],
    ['gateway/http/cors.ts', "import { x } from '../../console/standalone.ts';\nexport const y = x;\n", /never imports the operator or the console/],
    ['gateway/mcp/relay.ts', "import Fastify from 'fastify';\nexport const f = Fastify;\n", /MCP gateway has no HTTP framework/],
    ['gateway/mcp/relay.ts', "import { corsHeaders } from '../http/cors.ts';\nexport const c = corsHeaders;\n", /MCP gateway has no HTTP framework/],
    ['gateway/contract/keys.ts', "import { Redis } from 'ioredis';\nexport const r = Redis;\n", /The contract is pure/],
    ['gateway/contract/keys.ts', "import { RedisStore } from '../state/redis-store.ts';\nexport const r = RedisStore;\n", /The contract is pure/],
    ['gateway/state/store.ts', "import { x } from '../usage/exporter/exporter.ts';\nexport const y = x;\n", /does not depend on the exporter/],
    ['gateway/main.ts', "import { x } from '../operator/operator.ts';\nexport const y = x;\n", /never imports the operator/],
    ['operator/operator.ts', "import { RedisStore } from '../gateway/state/redis-store.ts';\nexport const r = RedisStore;\n", /narrow port/],
    ['console/cluster.ts', "import { x } from '../operator/operator.ts';\nexport const y = x;\n", /The console uses the contract/],
    ['console/keys/form.ts', "import { runCall } from '../../gateway/pipeline/call.ts';\nexport const r = runCall;\n", /never the operator or the call path/],
    [
      'billing/payments/webhook.ts',
      "import { consolePlugin } from '../../console/server/plugin.ts';\nexport const c = consolePlugin;\n",
      /Billing is a domain of its own/,
    ],
    [
      'billing/statements/statement.ts',
      "import { runCall } from '../../gateway/pipeline/call.ts';\nexport const r = runCall;\n",
      /Billing is a domain of its own/,
    ],
    [
      'gateway/state/billing-ledger.ts',
      "import { StripeWebhook } from '../../billing/payments/webhook.ts';\nexport const w = StripeWebhook;\n",
      /never imports the operator or the console or billing/,
    ],
  ])('%s refuses %j', async (file, code, message) => {
    const found = await restricted(file, code);
    expect(found.length).toBeGreaterThan(0);
    expect(found.join('\n')).toMatch(message);
  });

  it.each([
    ['gateway/contract/keys.ts', "import type { Redis } from 'ioredis';\nexport type R = Redis;\n"],
    ['gateway/pipeline/estimate.ts', "import { reserve } from './estimate.ts';\nexport const r = reserve;\n"],
    ['gateway/http/cors.ts', "import { runCall } from '../pipeline/call.ts';\nexport const r = runCall;\n"],
    ['gateway/main.ts', "import { x } from '../console/standalone.ts';\nexport const y = x;\n"],
    ['gateway/standalone-mode.ts', "import { startSlaJob } from '../billing/sla/sla-job.ts';\nexport const s = startSlaJob;\n"],
    ['console/server/billing-routes.ts', "import { statementPdf } from '../../billing/statements/statement-pdf.ts';\nexport const s = statementPdf;\n"],
    [
      'billing/wiring.ts',
      "import { RedisBilling } from '../gateway/state/billing-ledger.ts';\nimport { createPool } from '../gateway/usage/postgres/pool.ts';\nexport const r = [RedisBilling, createPool];\n",
    ],
    ['operator/operator.ts', "import { connectOperatorState } from '../gateway/state/operator-state.ts';\nexport const c = connectOperatorState;\n"],
    [
      'console/keys/form.ts',
      "import { hashKey } from '../../gateway/contract/keys.ts';\nimport { MemoryStore } from '../../gateway/state/memory-store.ts';\nexport const r = [hashKey, MemoryStore];\n",
    ],
  ])('%s allows %j', async (file, code) => {
    expect(await restricted(file, code)).toEqual([]);
  });
});
