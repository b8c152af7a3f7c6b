// Cluster sign-in: the bearer token a user pastes (a ServiceAccount token, or an OIDC ID token the API server
// accepts) is checked with a TokenReview, and again every few seconds while the session lasts (the session keeps it
// sealed under its id, see sign-in-token.ts). What they may do is Kubernetes RBAC, asked per account with a
// SubjectAccessReview on accounts.gateway.svc.dev/<name> (verbs get, manage-keys, view-usage, manage-billing).
// Answers are cached for a few seconds, so a page costs a handful of reviews.
import { GROUP } from '../../crds/schema/common.ts';
import type { KubeClients } from '../kube/clients.ts';
import type { Authenticator, Authorizer, Principal, Verb } from './principal.ts';

const CACHE_MS = 10_000;

export class KubernetesAuth implements Authenticator, Authorizer {
  readonly mode = 'kubernetes' as const;
  // A session's token is reviewed again as often as a right is asked again: a withdrawn token (its Secret deleted,
  // its bound object gone, expired) ends the session no later than a withdrawn Role ends a right.
  readonly reviewEveryMs = CACHE_MS;
  private readonly c: KubeClients;
  private readonly cache = new Map<string, { allowed: boolean; until: number }>();
  private readonly now: () => number;

  constructor(c: KubeClients, now: () => number = Date.now) {
    this.c = c;
    this.now = now;
  }

  async authenticate(token: string): Promise<Principal | null> {
    const review = await this.c.authn.createTokenReview({ body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', spec: { token } } });
    const s = review.status;
    if (!s?.authenticated || !s.user?.username) return null;
    return { kind: 'user', username: s.user.username, uid: s.user.uid ?? '', groups: s.user.groups ?? [], extra: s.user.extra ?? {} };
  }

  async allowed(p: Principal, verb: Verb, account: string): Promise<boolean> {
    if (p.kind !== 'user') return false;
    const id = JSON.stringify([p.username, p.uid, p.groups, verb, account]);
    const now = this.now();
    const hit = this.cache.get(id);
    if (hit && hit.until > now) return hit.allowed;
    const review = await this.c.authz.createSubjectAccessReview({
      body: {
        apiVersion: 'authorization.k8s.io/v1',
        kind: 'SubjectAccessReview',
        spec: {
          user: p.username,
          uid: p.uid || undefined,
          groups: p.groups,
          extra: p.extra,
          resourceAttributes: { namespace: this.c.namespace, group: GROUP, resource: 'accounts', name: account, verb },
        },
      },
    });
    const allowed = review.status?.allowed === true;
    if (this.cache.size > 10_000) this.cache.clear();
    this.cache.set(id, { allowed, until: now + CACHE_MS });
    return allowed;
  }
}
