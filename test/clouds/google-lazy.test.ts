// google-auth-library is loaded on the first call of a Google target, not when the gateway starts or builds its
// providers: a gateway without Google targets never loads it.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { expect, it } from 'vitest';
import { ROOT } from '../helpers/process.ts';

const script = `
import { createRequire } from 'node:module';
import { ProviderRegistry } from './gateway/providers/registry.ts';
const loaded = () => Object.keys(createRequire(import.meta.url).cache).some((k) => k.includes('/google-auth-library/'));
const registry = new ProviderRegistry();
const vertex = registry.get('vertex');
registry.get('gemini');
const before = loaded();
const target = { name: 't', provider: 'vertex', baseUrl: 'http://127.0.0.1:9', region: 'us-east5', project: 'p', upstreamModel: 'gemini-2.5-flash',
  credential: { kind: 'bundle', value: JSON.stringify({ 'service-account.json': '{"type":"service_account"}' }) }, weight: 1,
  timeouts: { connectMs: 500, firstByteMs: 500, idleMs: 500, totalMs: 500 }, mock: null };
const err = await vertex.send({ target, operation: 'chat', body: '{}', stream: false, headers: {}, signal: new AbortController().signal }).catch((e) => e);
console.log(JSON.stringify({ before, after: loaded(), reason: err.reason }));
await registry.close();
`;

it('loads google-auth-library on the first call of a Google target only', async () => {
  const { stdout } = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', script], { cwd: ROOT, encoding: 'utf8', timeout: 20_000 });
  expect(JSON.parse(stdout.trim())).toEqual({ before: false, after: true, reason: 'credential_error' });
});
