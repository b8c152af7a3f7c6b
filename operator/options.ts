// The operator's settings, all from the environment (a Deployment sets them); a bad value is an error that names it.
import { existsSync, readFileSync } from 'node:fs';
import { hostname } from 'node:os';

export interface LeaseTiming {
  /** How long a lease is valid after its last renewal; others wait this long before taking over (15 s). */
  leaseDurationMs: number;
  /** The leader gives up (exits) if it could not renew for this long (10 s). */
  renewDeadlineMs: number;
  /** Time between attempts to acquire or renew (2 s). */
  retryPeriodMs: number;
}

export interface OperatorOptions extends LeaseTiming {
  namespace: string;
  redisUrl: string;
  redisPrefix: string | undefined;
  pepper: string;
  identity: string;
  port: number;
  leaseName: string;
  resyncMs: number;
  /** How often the leader refreshes spend, budget and balance in the Accounts' and ApiKeys' status (60 s). */
  spendStatusMs: number;
  /** How often the leader asks whether the owners of self-service keys still have a right (revokeOnOffboard; 300 s). */
  offboardCheckMs: number;
  logLevel: string | undefined;
}

type Env = Record<string, string | undefined>;

export const PEPPER_REQUIRED =
  'SVC_KEY_PEPPER is not set. The operator stores API keys as HMACs under this secret pepper, and ' +
  'every gateway must hash presented keys with the same one: set it to one long random value (e.g. `openssl rand -hex 32`) ' +
  'in the operator and in every gateway.';

export const IN_CLUSTER_NAMESPACE = '/var/run/secrets/kubernetes.io/serviceaccount/namespace';

function int(env: Env, name: string, fallback: number, min = 1): number {
  const v = env[name];
  if (v === undefined || v === '') return fallback;
  const n = Number(v);
  if (!Number.isInteger(n) || n < min) throw new Error(`${name} must be an integer >= ${min}, got ${JSON.stringify(v)}`);
  return n;
}

function namespaceOf(env: Env, nsFile: string): string {
  const ns = env.WATCH_NAMESPACE || (existsSync(nsFile) ? readFileSync(nsFile, 'utf8').trim() : '');
  if (!ns) throw new Error('WATCH_NAMESPACE is not set (and no in-cluster namespace was found): set it to the one namespace this operator serves.');
  if (!/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/.test(ns)) throw new Error(`WATCH_NAMESPACE must be a namespace name, got ${JSON.stringify(ns)}`);
  return ns;
}

/** client-go's checks: the lease outlives the renew deadline, which leaves room for a retry or two. */
export function checkLeaseTiming(t: LeaseTiming): void {
  if (t.leaseDurationMs <= t.renewDeadlineMs) throw new Error('SVC_LEASE_DURATION_MS must be greater than SVC_LEASE_RENEW_DEADLINE_MS');
  if (t.renewDeadlineMs <= 1.2 * t.retryPeriodMs) throw new Error('SVC_LEASE_RENEW_DEADLINE_MS must be greater than 1.2 x SVC_LEASE_RETRY_PERIOD_MS');
}

export function operatorOptions(env: Env, nsFile = IN_CLUSTER_NAMESPACE): OperatorOptions {
  if (!env.REDIS_URL) throw new Error('REDIS_URL is not set: the operator writes the compiled config and key records there.');
  if (!env.SVC_KEY_PEPPER) throw new Error(PEPPER_REQUIRED);
  const prefix = env.SVC_REDIS_PREFIX || undefined;
  if (prefix !== undefined && /[{}\s]/.test(prefix)) throw new Error('SVC_REDIS_PREFIX must not contain braces or spaces');
  const timing: LeaseTiming = {
    leaseDurationMs: int(env, 'SVC_LEASE_DURATION_MS', 15_000),
    renewDeadlineMs: int(env, 'SVC_LEASE_RENEW_DEADLINE_MS', 10_000),
    retryPeriodMs: int(env, 'SVC_LEASE_RETRY_PERIOD_MS', 2_000),
  };
  checkLeaseTiming(timing);
  return {
    ...timing,
    namespace: namespaceOf(env, nsFile),
    redisUrl: env.REDIS_URL,
    redisPrefix: prefix,
    pepper: env.SVC_KEY_PEPPER,
    identity: env.POD_NAME || `${hostname()}-${process.pid}`,
    port: int(env, 'PORT', 8080, 0),
    leaseName: env.SVC_LEASE_NAME || 'svc-gateway-operator',
    resyncMs: int(env, 'SVC_RESYNC_SECONDS', 300) * 1000,
    spendStatusMs: int(env, 'SVC_SPEND_STATUS_SECONDS', 60) * 1000,
    offboardCheckMs: int(env, 'SVC_OFFBOARD_CHECK_SECONDS', 300) * 1000,
    logLevel: env.LOG_LEVEL,
  };
}
