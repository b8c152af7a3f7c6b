import { z } from 'zod';
import { API_VERSION, baseStatus, cel, listMapKeys, metadata, objectName, usd } from './common.ts';

const positiveMs = z.number().int().positive();

/** A tool name as MCP clients show it (1 to 128 of A-Z a-z 0-9 _ - .), or a glob of them where * matches any run. */
export const toolPattern = z
  .string()
  .min(1)
  .max(128)
  .regex(/^[A-Za-z0-9_.*-]+$/, 'must be a tool name or a glob of one (letters, digits, _ - . and *)')
  .describe('A tool name, or a glob where * matches any run of characters.');

/** Which servers and tools a Plan or an ApiKey opens: globs over McpServer names and `<server>/<tool>`. */
export const mcpAccess = z
  .object({
    servers: z.array(z.string().min(1).max(253)).max(100).optional().describe('McpServer names or globs open; default: every McpServer.'),
    tools: z
      .array(z.string().min(1).max(400))
      .max(200)
      .optional()
      .describe('Tools open, as <server>/<tool> globs (github/list_*, */search); default: every tool of an open server.'),
  })
  .describe('MCP servers and tools open through /mcp (docs/mcp.md).');

const header = z
  .object({
    name: z
      .string()
      .min(1)
      .max(100)
      .regex(/^[A-Za-z0-9!#$%&'*+.^_`|~-]+$/, 'must be an HTTP header name')
      .describe('The header sent upstream (Authorization, X-Api-Key, ...).'),
    value: z.string().max(8192).optional().describe('A value that is not a secret, written here.'),
    secretKeyRef: z
      .object({ name: objectName, key: z.string().min(1).max(253) })
      .optional()
      .describe('The value from a Secret: sealed at rest in Redis, never shown to clients.'),
  })
  .meta(cel({ rule: '(has(self.value) ? 1 : 0) + (has(self.secretKeyRef) ? 1 : 0) == 1', message: 'takes one of value, secretKeyRef' }));

const oauth = z
  .object({
    tokenUrl: z
      .url({ protocol: /^https?$/ })
      .meta(cel({ rule: "self.startsWith('http://') || self.startsWith('https://')", message: 'must be an http or https URL' }))
      .describe("The authorization server's token endpoint."),
    clientId: z.string().min(1).max(1000).describe('The client id the gateway authenticates as.'),
    clientSecretRef: z
      .object({ name: objectName, key: z.string().min(1).max(253) })
      .describe('The client secret, from a Secret: sealed at rest in Redis, never shown to clients.'),
    scopes: z
      .array(
        z
          .string()
          .min(1)
          .max(200)
          .regex(/^[!#-[\]-~]+$/, 'must be an OAuth scope token'),
      )
      .max(50)
      .optional()
      .describe('Scopes asked for (sent space-joined).'),
    audience: z.string().min(1).max(1000).optional().describe('The audience parameter, for authorization servers that ask for one (Auth0, Okta).'),
    resource: z.string().min(1).max(1000).optional().describe("The resource indicator (RFC 8707): the upstream MCP server's canonical URL."),
  })
  .describe(
    'An OAuth client-credentials grant: the gateway obtains an access token with client_secret_basic, keeps it until shortly before it expires, and sends it upstream as Authorization: Bearer.',
  );

export const mcpServerSpec = z
  .object({
    url: z
      .url({ protocol: /^https?$/ })
      .meta(cel({ rule: "self.startsWith('http://') || self.startsWith('https://')", message: 'must be an http or https URL' }))
      .optional()
      .describe("The upstream's endpoint: its Streamable HTTP URL (https://mcp.example.com/mcp), or with transport sse its SSE URL."),
    transport: z
      .enum(['streamable-http', 'sse'])
      .default('streamable-http')
      .describe(
        'streamable-http (MCP 2025-03-26 and later), or sse: the legacy HTTP+SSE transport (2024-11-05) of an upstream that has only that; each request then opens its own SSE stream and replays initialize (docs/mcp.md).',
      ),
    mock: z.object({}).strict().optional().describe('Instead of url: the built-in mock MCP server (tools echo, add and time; the offline demo).'),
    headers: z
      .array(header)
      .max(20)
      .default([])
      .describe("Headers sent upstream on every request (the upstream's own credential); the client's key is never sent.")
      .meta(listMapKeys('name')),
    oauth: oauth.optional(),
    tools: z
      .object({
        include: z.array(toolPattern).max(200).default(['*']).describe('Tools offered (globs); default all.'),
        exclude: z.array(toolPattern).max(200).default([]).describe('Tools hidden even when included.'),
      })
      .prefault({})
      .describe('Which of the upstream tools the gateway offers; a hidden tool is neither listed nor callable.'),
    prefix: z
      .string()
      .min(1)
      .max(64)
      .regex(/^[A-Za-z0-9][A-Za-z0-9_.-]*$/, 'must start with a letter or digit and hold letters, digits, _ - .')
      .meta(cel({ rule: "!self.contains('__')", message: 'cannot contain __ (it separates the prefix from the tool name)' }))
      .optional()
      .describe('On /mcp, tools are named <prefix>__<tool>; default metadata.name.'),
    pricing: z
      .object({
        perCallUsd: usd.default(0).describe('USD per tools/call, platform fee included.'),
        tools: z
          .array(z.object({ name: z.string().min(1).max(128), perCallUsd: usd }))
          .max(200)
          .default([])
          .describe('Prices of single tools (by their upstream name), in place of perCallUsd.')
          .meta(listMapKeys('name')),
      })
      .prefault({})
      .describe('Price of a tools/call: held at admission, charged when the call succeeds; a failed call costs nothing.'),
    timeouts: z
      .object({
        connectMs: positiveMs.default(5_000),
        firstByteMs: positiveMs.default(60_000).describe("Until the upstream's answer starts."),
        totalMs: positiveMs.default(600_000).describe('A whole POST answer, streamed or not.'),
      })
      .prefault({})
      .describe('Upstream timeouts in milliseconds.'),
  })
  // The same rule for manifests read outside a cluster (zod) as in one (CEL).
  .refine((s) => (s.url === undefined) !== (s.mock === undefined), { message: 'takes one of url, mock' })
  .refine((s) => s.oauth === undefined || s.url !== undefined, { message: 'oauth needs url', path: ['oauth'] })
  .refine((s) => s.oauth === undefined || !s.headers.some((h) => h.name.toLowerCase() === 'authorization'), {
    message: 'takes one of oauth, an Authorization header',
    path: ['oauth'],
  })
  .meta(
    cel(
      { rule: 'has(self.url) != has(self.mock)', message: 'takes one of url, mock' },
      { rule: '!has(self.oauth) || has(self.url)', message: 'oauth needs url', fieldPath: '.oauth' },
      {
        rule: "!has(self.oauth) || !has(self.headers) || !self.headers.exists(h, h.name.lowerAscii() == 'authorization')",
        message: 'takes one of oauth, an Authorization header',
        fieldPath: '.oauth',
      },
    ),
  );

export const mcpServer = z.object({
  apiVersion: z.literal(API_VERSION),
  kind: z.literal('McpServer'),
  metadata,
  spec: mcpServerSpec,
  status: z.object({ ...baseStatus }).optional(),
});

export type McpServerCr = z.infer<typeof mcpServer>;
export type McpAccess = z.infer<typeof mcpAccess>;
