// McpServers -> the snapshot's mcpServers, and a verdict per object. A server whose Secret (or the key in it) is
// missing is left out: calling it without its credential would only fail upstream, or worse, reach it anonymously.
import type { McpAccess, McpServerCr } from '../../crds/schema/index.ts';
import { usdToNano } from './money.ts';
import type { Problem } from './problem.ts';
import type { CompiledMcpAccess, CompiledMcpServer } from './snapshot.ts';
import { accepted, inScope, type Verdict } from './verdict.ts';

export interface CompiledMcp {
  servers: Record<string, CompiledMcpServer>;
  verdicts: Record<string, Verdict>;
}

/** Plan or ApiKey spec.mcp as the snapshot keeps it; undefined when absent (so older snapshots hash the same). */
export function mcpAccessOf(a: McpAccess | undefined): CompiledMcpAccess | undefined {
  return a ? { servers: a.servers ?? null, tools: a.tools ?? null } : undefined;
}

type Header = CompiledMcpServer['headers'][number];

function headersOf(s: McpServerCr, secrets: Map<string, Record<string, string>>): { headers: Header[]; missing: string | null } {
  const headers: Header[] = [];
  for (const h of s.spec.headers) {
    if (h.value !== undefined) {
      headers.push({ name: h.name, credential: { kind: 'value', value: h.value } });
      continue;
    }
    const ref = h.secretKeyRef;
    const value = ref ? secrets.get(ref.name)?.[ref.key] : undefined;
    if (!ref || value === undefined) return { headers, missing: ref ? `Secret ${ref.name} key ${ref.key}` : h.name };
    headers.push({ name: h.name, credential: { kind: 'value', value } });
  }
  return { headers, missing: null };
}

type OAuth = NonNullable<CompiledMcpServer['oauth']>;

/** spec.oauth with its client secret read from its Secret; `missing` names the Secret key that is not there. */
function oauthOf(s: McpServerCr, secrets: Map<string, Record<string, string>>): { oauth?: OAuth; missing: string | null } {
  const o = s.spec.oauth;
  if (!o) return { missing: null };
  const ref = o.clientSecretRef;
  const value = secrets.get(ref.name)?.[ref.key];
  if (value === undefined) return { missing: `Secret ${ref.name} key ${ref.key}` };
  return {
    oauth: {
      tokenUrl: o.tokenUrl,
      clientId: o.clientId,
      clientSecret: { kind: 'value', value },
      scopes: o.scopes ?? [],
      audience: o.audience ?? null,
      resource: o.resource ?? null,
    },
    missing: null,
  };
}

export function compileMcpServers(
  servers: readonly McpServerCr[],
  secrets: Map<string, Record<string, string>>,
  scope: string | undefined,
  problems: Problem[],
): CompiledMcp {
  const out: CompiledMcp = { servers: {}, verdicts: {} };
  const prefixes = new Map<string, string>();
  for (const s of servers) {
    const name = s.metadata.name;
    const object = `McpServer/${name}`;
    const prefix = s.spec.prefix ?? name;
    const h = headersOf(s, secrets);
    const { headers } = h;
    const o = oauthOf(s, secrets);
    const missing = h.missing ?? o.missing;
    if (missing) {
      problems.push({ object, field: h.missing ? 'spec.headers' : 'spec.oauth.clientSecretRef', message: `${missing} does not exist` });
      out.verdicts[name] = { ready: false, served: false, reason: 'MissingSecret', message: `${missing} does not exist${inScope(scope)}.` };
      continue;
    }
    const taken = prefixes.get(prefix);
    if (taken) {
      problems.push({ object, field: 'spec.prefix', message: `prefix ${prefix} is McpServer ${taken}'s` });
      out.verdicts[name] = { ready: false, served: false, reason: 'PrefixTaken', message: `McpServer ${taken} already names its tools ${prefix}__*.` };
      continue;
    }
    prefixes.set(prefix, name);
    out.servers[name] = {
      name,
      url: s.spec.url ?? null,
      ...(s.spec.transport === 'sse' && s.spec.url !== undefined ? { transport: 'sse' as const } : {}),
      prefix,
      headers,
      ...(o.oauth ? { oauth: o.oauth } : {}),
      include: s.spec.tools.include,
      exclude: s.spec.tools.exclude,
      perCallNano: usdToNano(s.spec.pricing.perCallUsd),
      toolNano: Object.fromEntries(s.spec.pricing.tools.map((t) => [t.name, usdToNano(t.perCallUsd)])),
      timeouts: s.spec.timeouts,
    };
    out.verdicts[name] = accepted(`Served at /mcp/${name}, its tools at /mcp as ${prefix}__<tool>.`);
  }
  return out;
}
