// What a detector reports and what a check does with it.

/** The built-in detectors, and the two a Guardrail fills in (its own regexes and word lists). */
export const DETECTORS = ['secrets', 'email', 'phone', 'card', 'iban', 'ip', 'national-id', 'regex', 'words'] as const;
export type DetectorName = (typeof DETECTORS)[number];

/** One match in the text a detector read: [start, end) UTF-16 offsets, and what it found (never the text itself). */
export interface Hit {
  start: number;
  end: number;
  /** The finer kind for the placeholder and the facts: `aws-access-key`, `email`, `card`, a regex's name. */
  kind: string;
}

/** Finds its matches in folded text (normalize.ts). Pure and synchronous: it runs on the hot path. */
export type Detect = (text: string) => Hit[];
