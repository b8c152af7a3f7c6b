// The name of a rotated key: the old name's base plus the next free number (ci-bot -> ci-bot-2 -> ci-bot-3).
export function rotatedName(name: string, taken: ReadonlySet<string>): string {
  const m = /^(.*)-(\d+)$/.exec(name);
  const base = m ? (m[1] as string) : name;
  for (let n = m ? Number(m[2]) + 1 : 2; ; n++) {
    const candidate = `${base}-${n}`;
    if (!taken.has(candidate)) return candidate;
  }
}
