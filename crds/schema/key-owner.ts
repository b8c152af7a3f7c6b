// Who a key made in the console belongs to, as its ApiKey carries it: the console writes these annotations, the
// operator's offboarding check reads them (the one place both layers take the names from).
export const CREATED_BY = 'gateway.svc.dev/created-by';
/** The creator's groups at creation (JSON array of strings), as the sign-in gave them (prefixes included). */
export const CREATED_BY_GROUPS = 'gateway.svc.dev/created-by-groups';
export const REVOKED_BY = 'gateway.svc.dev/revoked-by';
/** Why a key was revoked, when something other than a person's click did it (offboarding). */
export const REVOKE_REASON = 'gateway.svc.dev/revoke-reason';

/** Most groups kept on a key (an annotation is small; a SubjectAccessReview with more is rarely what binds). */
export const MAX_RECORDED_GROUPS = 100;

export function recordedGroups(value: string | undefined): string[] {
  if (!value) return [];
  try {
    const v: unknown = JSON.parse(value);
    return Array.isArray(v) ? v.filter((g): g is string => typeof g === 'string') : [];
  } catch {
    return [];
  }
}
