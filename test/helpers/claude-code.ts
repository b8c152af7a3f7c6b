// Claude Code (npm @anthropic-ai/claude-code, a native binary) as a test drives it: the binary, how to get it, a run
// with a clean environment (a temporary HOME and config dir, none of the machine's Anthropic or proxy variables), and
// the tool result it sends back to the model.
import { execFile } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT } from './process.ts';

export const CLAUDE = join(ROOT, 'node_modules/.bin/claude');

export const CLAUDE_HOW_TO = `Claude Code could not run. It is a devDependency: \`npm ci\` installs @anthropic-ai/claude-code and its native
package (@anthropic-ai/claude-code-linux-x64 here), and its postinstall copies the binary to
node_modules/@anthropic-ai/claude-code/bin/claude.exe. If npm ran with --ignore-scripts, run
\`node node_modules/@anthropic-ai/claude-code/install.cjs\`; then \`node_modules/.bin/claude --version\` must print a version.`;

export interface ClaudeRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

export function runClaude(args: string[], env: Record<string, string>, cwd: string, timeoutMs = 120_000): Promise<ClaudeRun> {
  return new Promise((resolve) => {
    execFile(CLAUDE, args, { cwd, env, timeout: timeoutMs, maxBuffer: 10 * 1024 * 1024 }, (err, stdout, stderr) => {
      const code = err ? (((err as { code?: unknown }).code as number | null) ?? 1) : 0;
      resolve({ code: typeof code === 'number' ? code : 1, stdout, stderr: `${stderr}${err && !stdout ? `\n${err.message}` : ''}` });
    });
  });
}

/** A clean environment: no Anthropic or proxy variables of the machine, a temporary HOME and config dir. */
export function claudeEnv(home: string, baseUrl: string, key: string, model: string): Record<string, string> {
  return {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: home,
    CLAUDE_CONFIG_DIR: join(home, '.claude'),
    TMPDIR: tmpdir(),
    LANG: 'C.UTF-8',
    ANTHROPIC_BASE_URL: baseUrl,
    ANTHROPIC_AUTH_TOKEN: key,
    ANTHROPIC_MODEL: model,
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
  };
}

/** The text of the tool result in a request, if it carries one (Anthropic tool_result or OpenAI tool message). */
export function toolResultText(body: Record<string, unknown>): string | null {
  for (const m of (body.messages as Array<{ role: string; content: unknown }> | undefined) ?? []) {
    if (m.role === 'tool') return String(m.content);
    if (!Array.isArray(m.content)) continue;
    for (const b of m.content as Array<{ type: string; content?: unknown }>) {
      if (b.type !== 'tool_result') continue;
      return typeof b.content === 'string' ? b.content : JSON.stringify(b.content);
    }
  }
  return null;
}
