// Limits across replicas (docs/billing.md: Limits): RPM and TPM across 3 gateway processes on one Redis, 10x the limit fired at once.
import { describe, expect, it } from 'vitest';
import { chat, countBy, fleetLeases, useFleet } from '../helpers/fleet.ts';
import { setup } from './fixtures.ts';
import { settled } from '../helpers/settled.ts';

const s = setup(
  [{ name: 'acme', spec: { trialCreditUsd: 100 } }],
  [
    { name: 'rpm-key', account: 'acme', spec: { limits: { rpm: 20 } } },
    { name: 'tpm-key', account: 'acme', spec: { limits: { tpm: 3000 } } },
  ],
);
const ctx = useFleet('limits', s.docs);

describe('rate limits across 3 gateway processes', () => {
  it('admits exactly 20 of 200 concurrent calls for a key with RPM 20; the rest get 429 with retry-after', async () => {
    const key = s.keys['rpm-key'] as string;
    const results = await Promise.all(Array.from({ length: 200 }, (_, i) => chat(ctx.fleet.urls[i % 3] as string, key)));
    const byStatus = countBy(results, (r) => r.status);
    console.log(`RPM 20, 200 concurrent over 3 processes: ${JSON.stringify(byStatus)}; accepted above the limit: ${(byStatus[200] ?? 0) - 20}`);
    expect(byStatus).toEqual({ 200: 20, 429: 180 });
    for (const r of results.filter((x) => x.status === 429)) {
      expect(Number(r.retryAfter)).toBeGreaterThanOrEqual(1);
      expect(Number(r.retryAfter)).toBeLessThanOrEqual(60);
      expect(JSON.parse(r.body)).toMatchObject({ error: { code: 'rate_limited', message: 'Rate limit of 20 requests per minute reached.' } });
    }
    // Every process served some, so the limit held across replicas, not within one. With leased admission a process
    // holding a lease may take every slot before the others reach Redis; then every process refused some: the one
    // limit held on each.
    const by = (status: number): number =>
      Object.keys(
        countBy(
          results.filter((r) => r.status === status),
          (r) => results.indexOf(r) % 3,
        ),
      ).length;
    if (fleetLeases().SVC_ADMISSION_LEASES) expect(by(429)).toBe(3);
    else expect(by(200)).toBeGreaterThan(1);
  });

  it('never lets the tokens of admitted calls exceed TPM, reserving first and settling the actual count', async () => {
    const key = s.keys['tpm-key'] as string;
    const results = await Promise.all(Array.from({ length: 150 }, (_, i) => chat(ctx.fleet.urls[i % 3] as string, key, { max_tokens: 200 })));
    const byStatus = countBy(results, (r) => r.status);
    await settled(ctx.store, 'acme');
    const events = (await ctx.store.usageEvents('acme')).filter((e) => e.apiKey === 'tpm-key' && e.status === 200);
    const tokens = events.reduce((sum, e) => sum + e.inputTokens + e.outputTokens, 0);
    console.log(
      `TPM 3000, 150 concurrent over 3 processes: ${JSON.stringify(byStatus)}; tokens served ${tokens}; above the limit: ${Math.max(0, tokens - 3000)}`,
    );
    expect(tokens).toBeLessThanOrEqual(3000);
    expect(byStatus[429]).toBeGreaterThan(0);
    expect(events).toHaveLength(byStatus[200] ?? 0);
  });
});
