// The chart with a Redis Cluster: a list of seed nodes becomes one comma-separated REDIS_URL (in the chart's Secret)
// and SVC_REDIS_CLUSTER=1 in every component; an existingSecret can hold the list with redis.cluster=true.
import { describe, expect, it } from 'vitest';
import { container, envOf, find, parseDocs } from './chart.ts';
import { template } from './helm.ts';

const SEEDS = ['redis://redis-cluster-0.redis:6379', 'redis://redis-cluster-1.redis:6379', 'redis://redis-cluster-2.redis:6379'];

describe('chart: Redis Cluster seed nodes', () => {
  it('keeps the seed nodes as one REDIS_URL and sets SVC_REDIS_CLUSTER=1 in every component', async () => {
    const docs = parseDocs(
      await template(
        'ns1',
        [],
        SEEDS.map((s, i) => `redis.clusterNodes[${i}]=${s}`),
      ),
    );
    const secret = find(docs, 'Secret', '-connections') as { stringData?: Record<string, string> };
    expect(secret.stringData?.['redis-url']).toBe(SEEDS.join(','));
    for (const name of ['-gateway', '-operator', '-console']) {
      const c = container(find(docs, 'Deployment', name));
      expect(envOf(c, 'SVC_REDIS_CLUSTER')?.value, name).toBe('1');
      expect(envOf(c, 'REDIS_URL')?.valueFrom?.secretKeyRef?.key, name).toBe('redis-url');
    }
    const single = parseDocs(await template('ns1'));
    expect(envOf(container(find(single, 'Deployment', '-gateway')), 'SVC_REDIS_CLUSTER')).toBeUndefined();
    const fromSecret = parseDocs(await template('ns1', [], ['redis.existingSecret=my-redis', 'redis.cluster=true']));
    expect(envOf(container(find(fromSecret, 'Deployment', '-gateway')), 'SVC_REDIS_CLUSTER')?.value).toBe('1');
  }, 60_000);

  it('refuses a seed node that is not a redis:// or rediss:// URL', async () => {
    await expect(template('ns1', [], ['redis.clusterNodes[0]=redis-0:6379'])).rejects.toThrow(/clusterNodes/);
  }, 60_000);
});
