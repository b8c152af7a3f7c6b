// Examples of docs/operations.md and docs/availability.md that are not calls: the Redis ACL users are the rules
// gateway/state/redis-acl.ts makes (which test/redis-security/tls-acl.test.ts runs on a real redis-server), and the
// Incident, added to the demo's manifests, is shown by a standalone gateway's status API.
import { readFileSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { DEMO_CONFIG } from '../../gateway/config/standalone.ts';
import { aclUser, type RedisRole } from '../../gateway/state/redis-acl.ts';
import { docExample } from '../helpers/docs.ts';
import { startGatewayProcess, type GatewayProcess } from '../helpers/process.ts';

let gw: GatewayProcess | undefined;

afterAll(async () => {
  await gw?.stop();
});

describe('docs examples that are configuration', () => {
  it('the ACL users of docs/operations.md are the rules the code makes for prefix svc', () => {
    const roles: RedisRole[] = ['gateway', 'operator', 'exporter'];
    const made = roles.map((r) => aclUser(`svc-${r}`, 'PASSWORD', r)).join('\n');
    expect(docExample('docs/operations.md', 'redis-acl-users').trim()).toBe(made.trim());
  });

  it('the Incident of docs/availability.md, among standalone manifests, is on /status', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'svc-docs-incident-'));
    const config = join(dir, 'config.yaml');
    writeFileSync(config, `${readFileSync(DEMO_CONFIG, 'utf8')}\n---\n${docExample('docs/availability.md', 'incident')}`);
    gw = await startGatewayProcess({ SVC_CONFIG: config });
    const body = (await (await fetch(`${gw.url}/status/api/v2/incidents/unresolved.json`)).json()) as { incidents: Array<{ name: string; status: string }> };
    expect(body.incidents.map((i) => [i.name, i.status])).toEqual([['Slow answers from the EU region', 'identified']]);
  });
});
