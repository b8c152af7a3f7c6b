// Placeholders for masked values, one per distinct value and kind within a call (`<EMAIL_1>`, `<CARD_2>`), and the
// way back: an answer that repeats a placeholder gets the caller's own value again where the check says `restore`.

export class Masker {
  private readonly byValue = new Map<string, string>();
  private readonly counts = new Map<string, number>();
  /** Placeholder -> the original, for the checks that restore. */
  private readonly restorable = new Map<string, string>();

  placeholder(kind: string, value: string, restore: boolean): string {
    const known = this.byValue.get(`${kind}\u0000${value}`);
    if (known) return known;
    const label = kind.toUpperCase().replace(/[^A-Z0-9]+/g, '_');
    const n = (this.counts.get(label) ?? 0) + 1;
    this.counts.set(label, n);
    const p = `<${label}_${n}>`;
    this.byValue.set(`${kind}\u0000${value}`, p);
    if (restore) this.restorable.set(p, value);
    return p;
  }

  get restores(): boolean {
    return this.restorable.size > 0;
  }

  /** The longest placeholder, so a stream can hold back enough to see one split across chunks. */
  get longest(): number {
    let n = 0;
    for (const p of this.restorable.keys()) n = Math.max(n, p.length);
    return n;
  }

  restore(text: string): string {
    if (this.restorable.size === 0 || !text.includes('<')) return text;
    return text.replace(/<[A-Z0-9_]+_\d+>/g, (p) => this.restorable.get(p) ?? p);
  }
}
