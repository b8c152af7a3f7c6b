import { Cluster, Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { aclRules } from './redis-acl.ts';
import { createRedis, redisConnectionFromEnv, splitUrls } from './redis-connect.ts';
import { redactUrl } from './redis-env.ts';

describe('Redis connection settings', () => {
  it('reads SVC_REDIS_CLUSTER and the TLS files, and refuses settings that cannot work', () => {
    expect(redisConnectionFromEnv('redis://a:1', {})).toEqual({ url: 'redis://a:1', cluster: false });
    expect(redisConnectionFromEnv('redis://a:1,redis://b:2', { SVC_REDIS_CLUSTER: '1' })).toMatchObject({ cluster: true });
    expect(() => redisConnectionFromEnv('redis://a:1,redis://b:2', {})).toThrow(/SVC_REDIS_CLUSTER=1/);
    expect(() => redisConnectionFromEnv('rediss://a:1', { SVC_REDIS_CERT_FILE: '/x' })).toThrow(/SVC_REDIS_KEY_FILE/);
    expect(() => createRedis({ url: 'redis://a:1', caFile: '/ca.pem' })).toThrow(/not rediss/);
    expect(() => createRedis({ url: 'rediss://a:1', caFile: '/nonexistent/ca.pem' })).toThrow(/Cannot read SVC_REDIS_CA_FILE/);
    expect(() => createRedis({ url: 'http://a:1' })).toThrow(/redis:\/\/ or rediss:\/\//);
    expect(() => createRedis({ url: 'redis://u:p@a:1,redis://b:2', cluster: true })).toThrow(/same user/);
    expect(splitUrls(' redis://a:1 , redis://b:2,')).toEqual(['redis://a:1', 'redis://b:2']);
  });

  it('makes a Redis for one URL and a Cluster for seed nodes, with the ACL user of the URL', () => {
    const one = createRedis({ url: 'redis://svc-gateway:s%40cret@127.0.0.1:6390/2' });
    expect(one).toBeInstanceOf(Redis);
    expect((one as Redis).options).toMatchObject({ host: '127.0.0.1', port: 6390, db: 2, username: 'svc-gateway', password: 's@cret', lazyConnect: true });
    const many = createRedis({ url: 'redis://u:p@10.0.0.1:7000,redis://u:p@10.0.0.2:7000', cluster: true });
    expect(many).toBeInstanceOf(Cluster);
    expect((many as Cluster).options.redisOptions).toMatchObject({ username: 'u', password: 'p' });
    one.disconnect();
    many.disconnect();
  });

  it('redacts every password of a seed list', () => {
    expect(redactUrl('redis://u:pw@a:1,redis://u:pw@b:2')).toBe('redis://u:***@a:1,redis://u:***@b:2');
  });

  it('gives no process an admin or keyspace-wide command', () => {
    for (const role of ['gateway', 'operator', 'exporter'] as const) {
      const rules = aclRules(role);
      expect(rules).toMatch(/^resetkeys resetchannels -@all /);
      for (const bad of ['flushall', 'flushdb', 'config', 'keys', 'scan', 'debug', '@admin', '@dangerous', '@all'])
        expect(rules).not.toMatch(new RegExp(`\\+${bad}\\b`));
      expect(rules).not.toMatch(/(^| )~\*/);
    }
  });
});
