// The one issue a 400 reports for a zod failure, with a useful message inside unions: zod says only "Invalid
// input" for `stop: 5` or a bad content part. Of a union's alternatives, those the value is plainly not (another
// JSON type, another literal `type`/`role`) are set aside; the first issue of the closest remaining one is
// reported (issues other than a wrong type first, then the deepest), so `messages[0].content[0].text` is named
// rather than `messages[0].content`.
import type { z } from 'zod';

type Issue = z.core.$ZodIssue;

export interface Reported {
  path: PropertyKey[];
  message: string;
}

/** The alternative is another kind of value altogether: another type at the union itself, another literal tag. */
function otherKind(issue: Issue): boolean {
  if (issue.code === 'invalid_type') return issue.path.length === 0;
  if (issue.code === 'invalid_value') return issue.path.length === 0 || (issue.path.length === 1 && issue.path[0] === 'type');
  return false;
}

function rank(r: Reported & { wrongType: boolean }): number {
  return (r.wrongType ? 0 : 1000) + r.path.length;
}

/** What the alternatives accept: `string or array`, `one of "none"|"auto"|"required" or object`. */
function expectedOf(branches: Issue[][]): string {
  const out = new Set<string>();
  for (const i of branches.map((b) => b[0])) {
    if (i?.code === 'invalid_type') out.add(i.expected);
    else if (i?.code === 'invalid_value') out.add(`one of ${i.values.map((v) => JSON.stringify(v)).join('|')}`);
  }
  return [...out].join(' or ');
}

function receivedOf(branches: Issue[][]): string {
  for (const b of branches) {
    const m = /received (\w+)/.exec(b[0]?.message ?? '');
    if (m) return `, received ${m[1]}`;
  }
  return '';
}

export function reportedIssue(issue: Issue): Reported & { wrongType: boolean } {
  const own = { path: [...issue.path], message: issue.message, wrongType: issue.code === 'invalid_type' };
  if (issue.code !== 'invalid_union' || issue.errors.length === 0) return own;
  const near = issue.errors.filter((branch) => branch.length > 0 && !branch.some(otherKind)).map((branch) => reportedIssue(branch[0] as Issue));
  if (near.length === 0) {
    own.message = `Invalid input: expected ${expectedOf(issue.errors)}${receivedOf(issue.errors)}`;
    return own;
  }
  const best = near.reduce((a, b) => (rank(b) > rank(a) ? b : a));
  return { ...best, path: [...issue.path, ...best.path] };
}
