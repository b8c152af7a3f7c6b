import { describe, expect, it } from 'vitest';
import type { CompiledMcpAccess, CompiledMcpServer } from '../contract/snapshot.ts';
import type { Principal } from '../pipeline/resolve.ts';
import { mayUseServer, mayUseTool, toolPriceNano } from './access.ts';
import { inboundId, outboundId, splitName } from './prefixed.ts';

const server: CompiledMcpServer = {
  name: 'github',
  url: 'https://x.test/mcp',
  prefix: 'gh',
  headers: [],
  include: ['get_*', 'list_*', 'search'],
  exclude: ['list_secrets'],
  perCallNano: 1_000,
  toolNano: { search: 50_000 },
  timeouts: { connectMs: 1, firstByteMs: 1, totalMs: 1 },
};

function who(plan?: CompiledMcpAccess, key?: CompiledMcpAccess): Principal {
  return {
    plan: { name: 'p', tier: 1, anthropicEndpoint: false, models: null, rpm: null, tpm: null, ...(plan ? { mcp: plan } : {}) },
    account: { name: 'a', plan: 'p', trialCreditNano: 0, credits: [] },
    key: {
      hash: 'h',
      name: 'k',
      display: 'd',
      account: 'a',
      monthlyBudgetNano: null,
      rpm: null,
      tpm: null,
      models: null,
      revoked: false,
      ...(key ? { mcp: key } : {}),
    },
  };
}

describe('access', () => {
  it.each<[string, Principal, string, boolean]>([
    ['an included tool, no plan or key rule', who(), 'get_issue', true],
    ['a tool outside include', who(), 'delete_repo', false],
    ['an excluded tool', who(), 'list_secrets', false],
    ['a tool the plan opens', who({ servers: null, tools: ['github/get_*'] }), 'get_issue', true],
    ['a tool the plan does not open', who({ servers: null, tools: ['github/get_*'] }), 'search', false],
    ['a tool the key does not open', who(undefined, { servers: null, tools: ['*/list_*'] }), 'get_issue', false],
    ['a tool both open', who({ servers: null, tools: ['github/*'] }, { servers: null, tools: ['*/search'] }), 'search', true],
  ])('%s', (_n, p, tool, allowed) => {
    expect(mayUseTool(p, server, tool)).toBe(allowed);
  });

  it('opens a server unless the plan or the key leaves it out', () => {
    expect(mayUseServer(who(), server)).toBe(true);
    expect(mayUseServer(who({ servers: ['git*'], tools: null }), server)).toBe(true);
    expect(mayUseServer(who({ servers: ['jira'], tools: null }), server)).toBe(false);
    expect(mayUseServer(who(undefined, { servers: [], tools: null }), server)).toBe(false);
  });

  it("prices a call at the tool's own price, else the server's", () => {
    expect(toolPriceNano(server, 'search')).toBe(50_000);
    expect(toolPriceNano(server, 'get_issue')).toBe(1_000);
    expect(toolPriceNano(server, 'constructor')).toBe(1_000);
  });
});

describe('names on /mcp', () => {
  it('splits <prefix>__<tool> at the first separator', () => {
    expect(splitName([server], 'gh__get__issue')).toEqual({ server, tool: 'get__issue' });
    expect(splitName([server], 'github__get_issue')).toBeNull();
    expect(splitName([server], '__x')).toBeNull();
    expect(splitName([server], 'gh')).toBeNull();
  });

  it("round-trips a server's request id through the client", () => {
    for (const id of [1, 'abc', 'with~tilde', 0]) expect(inboundId(outboundId('github', id))).toEqual({ server: 'github', id });
    expect(inboundId(7)).toBeNull();
    expect(inboundId('svc~github~{bad')).toBeNull();
    expect(inboundId('svc~github~{"a":1}')).toBeNull();
  });
});
