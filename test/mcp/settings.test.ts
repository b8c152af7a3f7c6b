// SVC_MCP_*: the line of docs/mcp.md gives what it says; a bad value is refused before anything starts.
import { describe, expect, it } from 'vitest';
import { docExample } from '../helpers/docs.ts';
import { DEFAULT_MCP_IDLE_MS, mcpSettingsFromEnv } from '../../gateway/mcp/settings.ts';

describe('MCP settings', () => {
  it('reads the origins and the idle TTL of the docs example (mcp-origins)', () => {
    const env = Object.fromEntries([...docExample('docs/mcp.md', 'mcp-origins').matchAll(/(SVC_MCP_[A-Z_]+)=(\S+)/g)].map((m) => [m[1], m[2]]));
    expect(mcpSettingsFromEnv(env)).toEqual({ idleMs: 600_000, allowedOrigins: ['https://agents.example.com', 'http://localhost:5173'] });
  });

  it('defaults to 30 minutes and no origin', () => {
    expect(mcpSettingsFromEnv({})).toEqual({ idleMs: DEFAULT_MCP_IDLE_MS, allowedOrigins: [] });
    expect(DEFAULT_MCP_IDLE_MS).toBe(30 * 60_000);
    expect(mcpSettingsFromEnv({ SVC_MCP_SESSION_IDLE_MS: '0' }).idleMs).toBe(0);
  });

  it.each([
    ['SVC_MCP_ALLOWED_ORIGINS', '*'],
    ['SVC_MCP_ALLOWED_ORIGINS', 'https://a.example/path'],
    ['SVC_MCP_ALLOWED_ORIGINS', 'ftp://a.example'],
    ['SVC_MCP_SESSION_IDLE_MS', '-1'],
    ['SVC_MCP_SESSION_IDLE_MS', '1.5'],
    ['SVC_MCP_SESSION_IDLE_MS', '50'],
  ])('refuses %s=%s', (name, value) => {
    expect(() => mcpSettingsFromEnv({ [name]: value })).toThrow(name);
  });
});
