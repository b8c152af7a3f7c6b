// Relative links and #anchors of Markdown pages, resolved as GitHub renders them: a link to a missing file, or to a
// heading that is not there, is a broken link.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';

/** README.md, every page under docs/ and the chart's README, as paths from the root. */
export function docPages(root: string): string[] {
  const walk = (dir: string): string[] =>
    readdirSync(join(root, dir), { withFileTypes: true }).flatMap((e) => {
      const path = join(dir, e.name);
      if (e.isDirectory()) return walk(path);
      return e.name.endsWith('.md') ? [path] : [];
    });
  return ['README.md', 'charts/svc-gateway/README.md', ...walk('docs')].sort();
}

/** The text outside fenced code blocks and inline code, where links are links. */
function prose(text: string): string {
  return text.replace(/^```[\s\S]*?^```/gm, '').replace(/`[^`\n]*`/g, '');
}

/** GitHub's heading ids: lower case, punctuation dropped, each space a hyphen, repeats numbered; and <a id>. */
export function anchorsOf(text: string): Set<string> {
  const ids = new Set<string>();
  const seen = new Map<string, number>();
  for (const m of text.replace(/^```[\s\S]*?^```/gm, '').matchAll(/^#{1,6} +(.+?) *#*$/gm)) {
    const base = (m[1] as string)
      .toLowerCase()
      .replace(/[^\p{L}\p{N} _-]/gu, '')
      .replace(/ /g, '-');
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    ids.add(n === 0 ? base : `${base}-${n}`);
  }
  for (const m of text.matchAll(/<a id="([^"]+)"/g)) ids.add(m[1] as string);
  return ids;
}

/** Every broken relative link of one page, as "page: target (why)". */
export function brokenLinks(root: string, page: string, text = readFileSync(join(root, page), 'utf8')): string[] {
  const broken: string[] = [];
  for (const m of prose(text).matchAll(/\]\(([^)\s]+)(?: "[^"]*")?\)/g)) {
    const href = m[1] as string;
    if (/^[a-z]+:/i.test(href)) continue;
    const [path = '', anchor] = href.split('#');
    if (path === '') {
      if (!anchorsOf(text).has(anchor ?? '')) broken.push(`${page}: ${href} (no heading ${href} in ${page})`);
      continue;
    }
    const file = join(root, dirname(page), path);
    if (!existsSync(file)) {
      broken.push(`${page}: ${href} (no file ${relative(root, file)})`);
      continue;
    }
    if (anchor === undefined || statSync(file).isDirectory()) continue;
    if (!file.endsWith('.md')) broken.push(`${page}: ${href} (an anchor into a file that is not Markdown)`);
    else if (!anchorsOf(readFileSync(file, 'utf8')).has(anchor)) broken.push(`${page}: ${href} (no heading #${anchor} in ${relative(root, file)})`);
  }
  return broken;
}
