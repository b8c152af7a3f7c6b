// Who is signed in. The admin (standalone) may do everything; a Kubernetes user's rights are asked per account.
export type Verb = 'get' | 'manage-keys' | 'create-own-keys' | 'view-usage' | 'manage-billing' | 'view-activity';

export type Principal = { kind: 'admin' } | { kind: 'user'; username: string; uid: string; groups: string[]; extra: Record<string, string[]> };

export function principalName(p: Principal): string {
  return p.kind === 'admin' ? 'admin' : p.username;
}

/** Signs a user in from what they typed (the admin token, or a Kubernetes bearer token); null when refused. */
export interface Authenticator {
  /** What the sign-in field is called and what the page says about it. */
  readonly mode: 'admin-token' | 'kubernetes';
  /** How often a session's token is reviewed again (ms); null: never (a token that cannot be withdrawn). */
  readonly reviewEveryMs: number | null;
  authenticate(token: string): Promise<Principal | null>;
}

/** Decides per account (Kubernetes RBAC in a cluster, everything for the admin). */
export interface Authorizer {
  allowed(p: Principal, verb: Verb, account: string): Promise<boolean>;
}
