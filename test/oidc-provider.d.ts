// oidc-provider ships no types: the little of its API the tests use.
declare module 'oidc-provider' {
  import type { IncomingMessage, ServerResponse } from 'node:http';
  interface ClientLike {
    grantTypeAllowed(type: string): boolean;
  }
  interface Account {
    accountId: string;
    claims: () => Record<string, unknown> | Promise<Record<string, unknown>>;
  }
  interface Configuration {
    clients?: Array<Record<string, unknown>>;
    jwks?: { keys: Array<Record<string, unknown>> };
    claims?: Record<string, string[]>;
    conformIdTokenClaims?: boolean;
    pkce?: { required?: (ctx: unknown, client: ClientLike) => boolean };
    features?: Record<string, { enabled: boolean }>;
    issueRefreshToken?: (ctx: unknown, client: ClientLike, source: unknown) => Promise<boolean> | boolean;
    ttl?: Record<string, number | ((...args: unknown[]) => number)>;
    fetch?: (url: string, options: RequestInit & { dispatcher?: unknown }) => Promise<Response>;
    findAccount?: (ctx: unknown, id: string) => Account | undefined | Promise<Account | undefined>;
  }
  export default class Provider {
    constructor(issuer: string, configuration?: Configuration);
    callback(): (req: IncomingMessage, res: ServerResponse) => void;
    /** Provider events (an EventEmitter): backchannel.success, backchannel.error (ctx, err, ...). */
    on(event: string, listener: (...args: never[]) => void): this;
  }
}
