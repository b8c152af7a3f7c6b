// SVC_TRUST_PROXY: which hops' addresses to believe for the client's address (the console's sign-in rate limit, and
// req.ip, req.protocol, req.host), in fastify's trustProxy terms:
//   unset, '' or 0      the TCP peer is the client; X-Forwarded-For is ignored (a process on the Internet itself)
//   a hop count N       the N proxies nearest to the process are trusted: the client is the address N entries from
//                       the right of X-Forwarded-For (1 = one Ingress or load balancer in front). The direct peer is
//                       believed whoever it is, so only where nothing but the proxy can reach the process; else
//                       name the proxies' addresses
//                       (fastify 5 itself ignores a number, so it is given the classic rule as a function)
//   addresses / CIDRs   comma-separated (10.0.0.0/8,127.0.0.1, IPv6 too): X-Forwarded-For is walked from the right
//                       while the hop that added the entry is one of these; the first other address is the client
// 'true' (believe every hop) is refused: the leftmost X-Forwarded-For entry is whatever the client wrote.
import { isIP } from 'node:net';

export type TrustProxy = false | number | string[];

const HELP =
  'SVC_TRUST_PROXY must be a hop count (0 to 10; 1 = one Ingress in front) or a comma-separated list of proxy addresses or CIDRs ' +
  '(e.g. 10.0.0.0/8,fd00::/8)';

function cidrOk(s: string): boolean {
  const [addr, bits, extra] = s.split('/');
  const v = isIP(addr ?? '');
  if (v === 0 || extra !== undefined) return false;
  if (bits === undefined) return true;
  return /^\d{1,3}$/.test(bits) && Number(bits) <= (v === 4 ? 32 : 128);
}

/** Parses SVC_TRUST_PROXY; throws an Error naming it for anything else. */
export function trustProxyFromEnv(env: Record<string, string | undefined>): TrustProxy {
  const raw = (env.SVC_TRUST_PROXY ?? '').trim();
  if (raw === '' || raw === '0' || raw === 'false') return false;
  if (/^\d+$/.test(raw)) {
    const n = Number(raw);
    if (n > 10) throw new Error(`${HELP}, got ${JSON.stringify(raw)}`);
    return n;
  }
  const list = raw.split(',').map((x) => x.trim());
  if (list.some((x) => !cidrOk(x))) throw new Error(`${HELP}, got ${JSON.stringify(raw)}`);
  return list;
}

/** The value for Fastify's `trustProxy` option: a hop count as the function `(address, hop) => hop < N`. */
export function fastifyTrustProxy(t: TrustProxy): false | string[] | ((address: string, hop: number) => boolean) {
  if (typeof t !== 'number') return t;
  if (t === 0) return false;
  return (_address, hop) => hop < t;
}
