// Real MCP servers behind the gateway in tests: the reference server `@modelcontextprotocol/server-everything`
// (its streamableHttp mode, a child process), the conformance suite's reference server (a pinned copy of its source,
// a child process), and servers written with the official SDK in the test, which check the upstream credential the
// gateway must inject and count the requests still open at the upstream.
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import ts from 'typescript';
import { z } from 'zod';
import { freePort } from './host.ts';
import { ROOT } from './process.ts';
import { until } from './until.ts';

export interface Upstream {
  url: string;
  close(): Promise<void>;
}

/** server-everything on a free port (it listens on /mcp). */
export async function startEverything(): Promise<Upstream & { output: () => string }> {
  // Its package exports nothing to import: the bin's file is run as npx would.
  const entry = join(ROOT, 'node_modules', '@modelcontextprotocol', 'server-everything', 'dist', 'index.js');
  if (!existsSync(entry)) throw new Error('server-everything is missing: run npm install (it is a devDependency, @modelcontextprotocol/server-everything).');
  const port = await freePort();
  const child: ChildProcess = spawn(process.execPath, [entry, 'streamableHttp'], {
    env: { ...process.env, PORT: String(port) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout?.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (output += d.toString()));
  await until(() => output.includes('listening on port'), 30_000).catch(() => {
    child.kill();
    throw new Error(`server-everything did not start (npm install gives @modelcontextprotocol/server-everything):\n${output}`);
  });
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    output: () => output,
    close: async () => {
      child.kill();
      await new Promise((r) => child.once('exit', r));
    },
  };
}

/**
 * The MCP conformance suite's reference server (modelcontextprotocol/conformance v0.1.16,
 * examples/servers/typescript/everything-server.ts, kept unmodified with its licence in test/mcp/testdata/), on a free
 * port (it listens on /mcp). Its source imports types as values, which Node's type stripping refuses, so TypeScript
 * transpiles it (as tsx would) and Node runs the result from the repository's root, where its imports resolve.
 */
export async function startConformanceServer(): Promise<Upstream & { output: () => string }> {
  const source = readFileSync(join(ROOT, 'test', 'mcp', 'testdata', 'conformance-server', 'everything-server.ts'), 'utf8');
  const js = ts.transpileModule(source, {
    compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022, esModuleInterop: true },
  }).outputText;
  const port = await freePort();
  const child: ChildProcess = spawn(process.execPath, ['--input-type=module', '-'], {
    cwd: ROOT,
    env: { ...process.env, PORT: String(port) },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  child.stdin?.end(js);
  let output = '';
  child.stdout?.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (output += d.toString()));
  await until(() => output.includes('MCP endpoint'), 60_000).catch(() => {
    child.kill();
    throw new Error(
      `the conformance reference server did not start (npm install gives its imports: @modelcontextprotocol/sdk, express, cors, zod):\n${output}`,
    );
  });
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    output: () => output,
    close: async () => {
      if (child.exitCode === null) {
        child.kill();
        await new Promise((r) => child.once('exit', r));
      }
    },
  };
}

export interface SdkUpstream extends Upstream {
  /** Requests the server is still answering (a client gone through the gateway must leave none). */
  open(): number;
  /** TCP connections the server has accepted so far. */
  connections(): number;
  /** Authorization headers it received (the gateway's credential, never the client's key). */
  authorizations: string[];
  /** tools/call requests it received, by tool. */
  calls: string[];
  /** Sessions it keeps open (initialized and not yet ended by DELETE). */
  sessions(): number;
  /** DELETE requests it received (sessions ended by their client). */
  deletes(): number;
}

/**
 * An SDK server (stateful sessions) with tools echo, fail (isError), slow (answers after `slowMs`, or never: 0),
 * notify (progress notifications then an answer, on an SSE stream), grow (adds a tool grown_<n>: the server
 * sends tools/list_changed on its GET stream) and admin_delete; a resource note://one and a prompt greet. It
 * answers 401 unless the request carries `Authorization: Bearer <token>` (or, given a function, a Bearer token it
 * accepts: the tokens an OAuth authorization server issued and that have not expired).
 */
export async function startSdkServer(
  token: string | ((bearer: string) => boolean),
  opts: { slowMs?: number; json?: boolean; keepAliveMs?: number; host?: string; rejectTool?: boolean } = {},
): Promise<SdkUpstream> {
  const transports = new Map<string, StreamableHTTPServerTransport>();
  const authorizations: string[] = [];
  const calls: string[] = [];
  let deletes = 0;
  let open = 0;
  const build = (): McpServer => {
    const s = new McpServer({ name: 'sdk-test-upstream', version: '1.0.0' });
    const tool = (
      name: string,
      fn: (
        args: { text?: string },
        extra: { signal: AbortSignal; sendNotification: (n: never) => Promise<void>; _meta?: { progressToken?: string | number } },
      ) => Promise<{ content: { type: 'text'; text: string }[]; isError?: boolean }>,
    ): void => {
      s.registerTool(name, { description: `the ${name} tool`, inputSchema: { text: z.string().optional() } }, async (args, extra) => {
        calls.push(name);
        return fn(args, extra as never);
      });
    };
    tool('echo', async ({ text }) => ({ content: [{ type: 'text', text: text ?? '' }] }));
    tool('fail', async () => ({ content: [{ type: 'text', text: 'it failed' }], isError: true }));
    tool('admin_delete', async () => ({ content: [{ type: 'text', text: 'deleted' }] }));
    // Answers with a JSON-RPC error quoting its argument. McpServer turns what a tool throws into an isError result,
    // except a URL elicitation request, which it passes on as the JSON-RPC error.
    if (opts.rejectTool)
      tool('reject', async ({ text }) => {
        throw new McpError(ErrorCode.UrlElicitationRequired, `Rejected: ${text ?? ''}`, { elicitations: [] });
      });
    tool(
      'slow',
      (_a, extra) =>
        new Promise((resolve) => {
          const t = opts.slowMs ? setTimeout(() => resolve({ content: [{ type: 'text', text: 'late' }] }), opts.slowMs) : undefined;
          extra.signal.addEventListener('abort', () => clearTimeout(t));
        }),
    );
    tool('notify', async (_a, extra) => {
      const progressToken = extra._meta?.progressToken;
      if (progressToken !== undefined) {
        for (let i = 1; i <= 3; i++)
          await extra.sendNotification({ method: 'notifications/progress', params: { progressToken, progress: i, total: 3 } } as never);
      }
      return { content: [{ type: 'text', text: 'notified' }] };
    });
    let grown = 0;
    tool('grow', async () => {
      s.registerTool(`grown_${++grown}`, { description: 'a grown tool' }, async () => ({ content: [{ type: 'text', text: 'grown' }] }));
      return { content: [{ type: 'text', text: 'grew' }] };
    });
    s.registerResource('note', 'note://one', { mimeType: 'text/plain' }, async (uri) => ({ contents: [{ uri: uri.href, text: 'the note' }] }));
    s.registerPrompt('greet', { argsSchema: { who: z.string() } }, ({ who }) => ({
      messages: [{ role: 'user', content: { type: 'text', text: `Hello ${who}` } }],
    }));
    return s;
  };
  const server: Server = createServer((req: IncomingMessage, res) => {
    authorizations.push(String(req.headers.authorization ?? ''));
    const auth = String(req.headers.authorization ?? '');
    const ok = typeof token === 'string' ? auth === `Bearer ${token}` : auth.startsWith('Bearer ') && token(auth.slice(7));
    if (!ok) {
      res.writeHead(401, { 'content-type': 'application/json' }).end('{"error":"unauthorized"}');
      return;
    }
    open++;
    res.on('close', () => open--);
    if (req.method === 'DELETE') deletes++;
    void (async () => {
      const sid = req.headers['mcp-session-id'];
      let t = typeof sid === 'string' ? transports.get(sid) : undefined;
      if (!t && typeof sid === 'string') {
        res.writeHead(404).end();
        return;
      }
      if (!t) {
        const created = new StreamableHTTPServerTransport({
          sessionIdGenerator: () => crypto.randomUUID(),
          enableJsonResponse: opts.json ?? false,
          onsessioninitialized: (id) => void transports.set(id, created),
        });
        created.onclose = () => void (created.sessionId && transports.delete(created.sessionId));
        await build().connect(created);
        t = created;
      }
      await t.handleRequest(req, res);
    })();
  });
  let connections = 0;
  server.on('connection', () => connections++);
  // Node's default is 5 s; a test may keep idle connections longer, as servers behind other proxies do.
  if (opts.keepAliveMs !== undefined) server.keepAliveTimeout = opts.keepAliveMs;
  // Loopback unless a test's pods must reach it (the node's address the end-to-end test gives).
  const host = opts.host ?? '127.0.0.1';
  await new Promise<void>((r) => server.listen(0, host, r));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://${host}:${port}/mcp`,
    open: () => open,
    connections: () => connections,
    authorizations,
    calls,
    deletes: () => deletes,
    sessions: () => transports.size,
    close: async () => {
      for (const t of transports.values()) await t.close();
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
  };
}
