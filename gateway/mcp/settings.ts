// The MCP endpoints' settings, from the environment (gateway/options.ts reads them with the others).
type Env = Record<string, string | undefined>;

export interface McpSettings {
  /** A session with no request for this long has its upstream sessions ended and its id refused (0: never). */
  idleMs: number;
  /** Browser origins allowed on /mcp (exact `scheme://host[:port]`); any other Origin is refused. */
  allowedOrigins: string[];
}

export const DEFAULT_MCP_IDLE_MS = 1800000;

export const DEFAULT_MCP_SETTINGS: McpSettings = { idleMs: DEFAULT_MCP_IDLE_MS, allowedOrigins: [] };

function idleMs(env: Env): number {
  const v = env.SVC_MCP_SESSION_IDLE_MS || '1800000';
  const n = Number(v);
  if (!Number.isSafeInteger(n) || n < 0 || (n > 0 && n < 100))
    throw new Error(`SVC_MCP_SESSION_IDLE_MS must be 0 (never) or an integer >= 100, got ${JSON.stringify(v)}`);
  return n;
}

function origins(env: Env): string[] {
  const v = env.SVC_MCP_ALLOWED_ORIGINS ?? '';
  return v
    .split(',')
    .map((o) => o.trim())
    .filter((o) => o !== '')
    .map((o) => {
      let u: URL;
      try {
        u = new URL(o);
      } catch {
        throw new Error(`SVC_MCP_ALLOWED_ORIGINS: ${JSON.stringify(o)} is not an origin (scheme://host[:port])`);
      }
      if ((u.protocol !== 'http:' && u.protocol !== 'https:') || u.origin !== o.replace(/\/$/, ''))
        throw new Error(`SVC_MCP_ALLOWED_ORIGINS: ${JSON.stringify(o)} is not an origin (scheme://host[:port], no path; * is not allowed)`);
      return u.origin;
    });
}

export function mcpSettingsFromEnv(env: Env): McpSettings {
  return { idleMs: idleMs(env), allowedOrigins: origins(env) };
}
