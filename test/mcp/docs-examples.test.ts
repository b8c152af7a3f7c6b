// docs/mcp.md's manifests as written: the McpServer with its Secret is served (header sealed from the Secret,
// globs, prices), and the Plan and ApiKey access rules narrow what a key sees, as the page says.
import { parseAllDocuments } from 'yaml';
import { describe, expect, it } from 'vitest';
import { compile } from '../../gateway/contract/compile.ts';
import { Keyring, sealSnapshot, unsealSnapshot } from '../../gateway/contract/sealed-credentials.ts';
import { parseManifests } from '../../gateway/config/manifests.ts';
import { mayUseServer, mayUseTool } from '../../gateway/mcp/access.ts';
import { principal } from '../../gateway/pipeline/resolve.ts';
import { docExample } from '../helpers/docs.ts';
import { account } from '../helpers/manifests.ts';

function docs(yaml: string): object[] {
  return parseAllDocuments(yaml).map((d) => d.toJS() as object);
}

const EXAMPLES = {
  server: () => [...docs(docExample('docs/mcp.md', 'mcp-server')), ...docs(docExample('docs/mcp.md', 'mcp-access'))],
  oauth: () => docs(docExample('docs/mcp.md', 'mcp-oauth')),
};

function compiled(extra: object[], examples: keyof typeof EXAMPLES = 'server'): ReturnType<typeof compile> {
  const parsed = parseManifests(
    [...EXAMPLES[examples](), ...extra].map((doc, i) => ({
      source: `mcp.md#${i}`,
      doc,
    })),
  );
  expect(parsed.errors).toEqual([]);
  expect(parsed.warnings).toEqual([]);
  return compile(parsed.set, { pepper: 'p', keyFor: () => 'sk-svc-00000000000000000000000000000000000000' });
}

describe('docs/mcp.md examples', () => {
  it('mcp-server: served, its header from the Secret, its prices in nano-USD', () => {
    const r = compiled([account('my-team', 'team')]);
    expect(r.problems).toEqual([]);
    expect(r.verdicts.mcpServers.github).toMatchObject({ ready: true, served: true });
    expect(r.snapshot.mcpServers?.github).toMatchObject({
      prefix: 'gh',
      headers: [{ name: 'Authorization', credential: { kind: 'value', value: 'Bearer ghp_your_token' } }],
      perCallNano: 1_000_000,
      toolNano: { search_code: 10_000_000 },
    });
  });

  it('mcp-access: the key gets what both its plan and itself allow', () => {
    const r = compiled([account('my-team', 'team')]);
    const key = r.keys.find((k) => k.name === 'ci-bot');
    if (!key) throw new Error('no ci-bot key');
    const p = principal(r.snapshot, key);
    const github = r.snapshot.mcpServers?.github;
    if (!github) throw new Error('no github server');
    expect(mayUseServer(p, github)).toBe(true);
    expect(mayUseTool(p, github, 'get_file_contents')).toBe(true);
    expect(mayUseTool(p, github, 'search_code')).toBe(false);
    expect(mayUseTool(p, github, 'list_secret_scanning_alerts')).toBe(false);
    expect(mayUseServer(p, { ...github, name: 'jira' })).toBe(false);
  });

  it('mcp-oauth: served with its client-credentials grant, the client secret from the Secret, sealed at rest', () => {
    const r = compiled([], 'oauth');
    expect(r.problems).toEqual([]);
    expect(r.verdicts.mcpServers.crm).toMatchObject({ ready: true, served: true });
    const crm = r.snapshot.mcpServers?.crm;
    expect(crm).toMatchObject({
      url: 'https://mcp.crm.example.com/mcp',
      headers: [],
      oauth: {
        tokenUrl: 'https://auth.example.com/oauth2/token',
        clientId: 'svc-gateway',
        clientSecret: { kind: 'value', value: 'your-client-secret' },
        scopes: ['crm:read', 'crm:write'],
        audience: null,
        resource: 'https://mcp.crm.example.com/mcp',
      },
    });
    const ring = new Keyring([Buffer.alloc(32, 3)]);
    const sealed = sealSnapshot(r.snapshot, ring);
    expect(JSON.stringify(sealed)).not.toContain('your-client-secret');
    expect(unsealSnapshot(sealed, ring)).toEqual(r.snapshot);
  });

  it('mcp-oauth without its Secret is not served, the verdict naming the Secret', () => {
    const [, server] = EXAMPLES.oauth();
    const parsed = parseManifests([{ source: 'mcp.md#0', doc: server as object }]);
    const r = compile(parsed.set, { pepper: 'p' });
    expect(r.snapshot.mcpServers).toBeUndefined();
    expect(r.verdicts.mcpServers.crm).toMatchObject({
      served: false,
      reason: 'MissingSecret',
      message: expect.stringContaining('Secret crm-mcp-client key client-secret'),
    });
  });

  it('mcp-oauth with an Authorization header too is refused: one credential', () => {
    const [secretDoc, server] = EXAMPLES.oauth() as [object, { spec: Record<string, unknown> }];
    const both = { ...server, spec: { ...server.spec, headers: [{ name: 'authorization', value: 'Bearer static' }] } };
    const parsed = parseManifests([secretDoc, both].map((doc, i) => ({ source: `mcp.md#${i}`, doc })));
    expect(JSON.stringify(parsed.errors)).toContain('takes one of oauth, an Authorization header');
  });

  it('the Claude Code and Codex lines point at /mcp with the key as a Bearer token', () => {
    expect(docExample('docs/mcp.md', 'mcp-claude-code')).toMatch(
      /^claude mcp add --transport http \S+ http:\/\/127\.0\.0\.1:8080\/mcp --header "Authorization: Bearer \$SVC_KEY"\n$/,
    );
    expect(docExample('docs/mcp.md', 'mcp-codex')).toMatch(/^codex mcp add \S+ --url http:\/\/127\.0\.0\.1:8080\/mcp --bearer-token-env-var SVC_KEY\n$/);
  });
});
