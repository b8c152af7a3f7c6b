// The operator's environment: required settings named when missing, client-go's lease timing rules enforced.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { operatorOptions } from './options.ts';

const base = { REDIS_URL: 'redis://127.0.0.1:6379', SVC_KEY_PEPPER: 'p', WATCH_NAMESPACE: 'team-a' };
const NO_FILE = '/nonexistent/namespace';

describe('operatorOptions', () => {
  it('reads defaults as client-go has them: lease 15 s, renew 10 s, retry 2 s', () => {
    const o = operatorOptions({ ...base, POD_NAME: 'op-0' }, NO_FILE);
    expect(o).toMatchObject({
      namespace: 'team-a',
      identity: 'op-0',
      port: 8080,
      leaseName: 'svc-gateway-operator',
      leaseDurationMs: 15_000,
      renewDeadlineMs: 10_000,
      retryPeriodMs: 2_000,
      resyncMs: 300_000,
      spendStatusMs: 60_000,
      offboardCheckMs: 300_000,
    });
    expect(operatorOptions({ ...base, SVC_OFFBOARD_CHECK_SECONDS: '2' }, NO_FILE).offboardCheckMs).toBe(2_000);
    expect(operatorOptions({ ...base, SVC_SPEND_STATUS_SECONDS: '5' }, NO_FILE).spendStatusMs).toBe(5_000);
    expect(() => operatorOptions({ ...base, SVC_SPEND_STATUS_SECONDS: '0' }, NO_FILE)).toThrow(/SVC_SPEND_STATUS_SECONDS must be an integer >= 1/);
  });

  it.each([
    [{ REDIS_URL: '' }, /REDIS_URL is not set/],
    [{ SVC_KEY_PEPPER: '' }, /SVC_KEY_PEPPER is not set.*same one/],
    [{ WATCH_NAMESPACE: '' }, /WATCH_NAMESPACE is not set/],
    [{ WATCH_NAMESPACE: 'Team A' }, /WATCH_NAMESPACE must be a namespace name/],
    [{ SVC_LEASE_DURATION_MS: '10000' }, /SVC_LEASE_DURATION_MS must be greater than SVC_LEASE_RENEW_DEADLINE_MS/],
    [{ SVC_LEASE_RETRY_PERIOD_MS: '9000' }, /1.2 x SVC_LEASE_RETRY_PERIOD_MS/],
    [{ PORT: 'eighty' }, /PORT must be an integer/],
    [{ SVC_REDIS_PREFIX: 'a{b}' }, /must not contain braces/],
  ])('refuses %j', (env, message) => {
    expect(() => operatorOptions({ ...base, ...env }, NO_FILE)).toThrow(message);
  });

  it("falls back to the Pod's own namespace in a cluster", () => {
    const file = join(mkdtempSync(join(tmpdir(), 'ns-')), 'namespace');
    writeFileSync(file, 'gateway-prod\n');
    expect(operatorOptions({ ...base, WATCH_NAMESPACE: undefined }, file).namespace).toBe('gateway-prod');
  });
});
