// docs/reference/settings.md: every setting of every process, from their own sources: each process's --help (run, as
// a reader would run it) and the code that reads the environment (every `env.NAME` of the code's folders,
// docs/gen/sources.ts, with the default the code falls back to when it is a literal there).
import { execFile } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { cell, code, header, table } from './markdown.ts';
import { codeDirs } from './sources.ts';

/** Files that read the environment for tests only (golden files), not settings of a process. */
const NOT_SETTINGS = /(\.test\.ts|\/testdata\/)/;

interface Read {
  name: string;
  files: Set<string>;
  defaults: Set<string>;
}

function sourceFiles(root: string): string[] {
  return codeDirs(root).flatMap((dir) =>
    (readdirSync(join(root, dir), { recursive: true, encoding: 'utf8' }) as string[])
      .filter((f) => f.endsWith('.ts'))
      .map((f) => `${dir}/${f}`)
      .filter((f) => !NOT_SETTINGS.test(f)),
  );
}

/** Every environment variable the code reads: `env.NAME`, `env['NAME']`, and our `'SVC_…'` names handed to a parser. */
export function environmentReads(root: string): Map<string, Read> {
  const reads = new Map<string, Read>();
  const add = (name: string, file: string, dflt?: string): void => {
    const r = reads.get(name) ?? { name, files: new Set(), defaults: new Set() };
    r.files.add(file);
    if (dflt !== undefined && dflt !== "''") r.defaults.add(dflt.replace(/_/g, ''));
    reads.set(name, r);
  };
  for (const file of sourceFiles(root)) {
    const text = readFileSync(join(root, file), 'utf8');
    for (const m of text.matchAll(/env(?:\.|\[')([A-Z][A-Z0-9_]+)'?\]?(?:\s*(?:\|\||\?\?)\s*('[^']*'|[\d_]+\b))?/g)) add(m[1] as string, file, m[2]);
    // Our own names handed to a parser (`int(env, 'SVC_X', 15_000)`, a table of names): the literal is the read.
    for (const m of text.matchAll(/'((?:SVC|STRIPE)_[A-Z0-9_]+)'(?:\s*,\s*([\d_]+)\b)?/g)) add(m[1] as string, file, m[2]);
    for (const m of text.matchAll(/\(\s*env\s*,\s*'([A-Z][A-Z0-9_]+)'(?:\s*,\s*([\d_]+)\b)?/g)) add(m[1] as string, file, m[2]);
  }
  return reads;
}

export interface ProcessHelp {
  /** The npm script(s) that run it. */
  scripts: string[];
  file: string;
  help: string;
}

/** Each process the npm scripts start, with its --help (paths under the checkout made relative to it). */
export async function processHelps(root: string): Promise<ProcessHelp[]> {
  const scripts = (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts;
  const byFile = new Map<string, string[]>();
  for (const [name, command] of Object.entries(scripts)) {
    const file = /^(?:exec )?node (\S+\.ts)\b/.exec(command)?.[1];
    // A process of the program, not a tool (crds/generate.ts writes files; test/ and docs/ are not the program).
    if (file && codeDirs(root).includes(file.split('/')[0] as string) && !file.startsWith('crds/')) byFile.set(file, [...(byFile.get(file) ?? []), name]);
  }
  const run = promisify(execFile);
  return Promise.all(
    [...byFile].map(async ([file, names]) => {
      const { stdout } = await run(process.execPath, [file, '--help'], { cwd: root, encoding: 'utf8' });
      return { scripts: names, file, help: stdout.replaceAll(`${join(root)}/`, '').trimEnd() };
    }),
  );
}

/**
 * The words --help gives each setting: from its name to the next name (a default is in parentheses). A name starts a
 * line of the help, or stands between two spaces (or a comma) and two spaces (or a parenthesis, a comma) on one.
 */
export function helpEntries(help: string): Map<string, string> {
  const entries = new Map<string, string>();
  const names = [...help.matchAll(/^ {2}([A-Z][A-Z0-9_]{2,})(?:=\S+)?(?= |,|$)|(?: {2}|, )([A-Z][A-Z0-9_]{2,})(?:=\S+)?(?= {2}| \(|,|$)/gm)];
  names.forEach((m, i) => {
    const name = (m[1] ?? m[2]) as string;
    const start = (m.index ?? 0) + m[0].length;
    const blank = help.indexOf('\n\n', start);
    const end = names[i + 1]?.index ?? (blank >= 0 ? blank : help.length);
    const words = help.slice(start, end).replace(/\s+/g, ' ').replace(/,$/, '').trim();
    if (!entries.has(name)) entries.set(name, words);
  });
  return entries;
}

/** The pages of docs/ (not the reference) that name a setting, as links from docs/reference/. */
export function pagesNaming(root: string, name: string): string[] {
  return readdirSync(join(root, 'docs'))
    .filter((f) => f.endsWith('.md') && new RegExp(`\\b${name}\\b`).test(readFileSync(join(root, 'docs', f), 'utf8')))
    .sort()
    .map((f) => `[${f.replace(/\.md$/, '')}](../${f})`);
}

export async function settingsPage(root: string): Promise<string> {
  const helps = (await processHelps(root)).sort((a, b) => a.file.localeCompare(b.file));
  const reads = environmentReads(root);
  const described = helps.map((h) => ({ h, entries: helpEntries(h.help) }));
  const rows = [...reads.values()]
    .sort((a, b) => a.name.localeCompare(b.name))
    .map((r) => {
      const said = described.filter((d) => d.entries.has(r.name));
      const words = said.map((d) => `${cell(d.entries.get(r.name) ?? '')} (${d.h.scripts.map((s) => `\`npm run ${s}\``).join(', ')})`);
      return [
        code(r.name),
        [...r.defaults].map((d) => code(d.replace(/^'|'$/g, ''))).join(', '),
        words.join('<br>') || 'not in any `--help`',
        pagesNaming(root, r.name).join(', '),
        [...r.files]
          .sort()
          .map((f) => code(f))
          .join(', '),
      ];
    });
  const sections = helps.map((h) =>
    [
      `### ${h.scripts.map((s) => `npm run ${s}`).join(', ')}`,
      '',
      `\`npm run ${h.scripts[0] ?? ''} -- --help\` (\`node ${h.file} --help\` in the image):`,
      '',
      '```text',
      h.help,
      '```',
    ].join('\n'),
  );
  return [
    header('Settings', "each process's --help and the code that reads the environment (gateway/options.ts, operator/options.ts, and the other parsers)"),
    'Every environment variable a process reads, with the default the code falls back to (when it is a literal there), what',
    "the processes' `--help` says of it (defaults in parentheses), the pages that explain it, and where it is read; then",
    "each process's `--help` as it prints it (command-line flags are there).",
    '',
    '## Environment variables',
    '',
    table(['variable', 'default in the code', 'what `--help` says', 'explained in', 'read in'], rows),
    '',
    '## Each process',
    '',
    sections.join('\n\n'),
    '',
  ].join('\n');
}
