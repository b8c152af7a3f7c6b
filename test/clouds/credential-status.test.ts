// A cloud credential that cannot be obtained, as the status page and the probes show it (issue 24): a Vertex target
// whose GKE metadata server does not answer fails its probes with the reason "credential error"; after two probe rounds
// the status page's incident for a model with no other target says so, naming the target; a model with another target
// fails its calls over to it meanwhile.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeAnthropic, type FakeAnthropic } from '../fakes/anthropic-upstream.ts';
import { basics, route } from '../helpers/manifests.ts';
import type { GatewayProcess } from '../helpers/process.ts';
import { until } from '../helpers/until.ts';
import { startGoogleGateway } from './google-harness.ts';

let spare: FakeAnthropic;
let gw: GatewayProcess;
const b = basics();

beforeAll(async () => {
  spare = await startFakeAnthropic('spare');
  gw = await startGoogleGateway(
    [
      ...b.docs,
      route(
        'claude-vertex',
        [
          {
            name: 'vertex-nocred',
            provider: 'vertex',
            region: 'us-east5',
            project: 'proj-1',
            baseUrl: 'http://127.0.0.1:9',
            upstreamModel: 'claude-sonnet-4-5@20250929',
            credentials: { ambient: {} },
          },
          { name: 'spare', provider: 'anthropic', baseUrl: spare.baseUrl, weight: 0 },
        ] as never,
        { probe: { intervalSeconds: 5 } },
      ),
      // Its only target: the model is down when the target is, so the status page opens an incident.
      route(
        'claude-vertex-only',
        [
          {
            name: 'vertex-only',
            provider: 'vertex',
            region: 'us-east5',
            project: 'proj-1',
            baseUrl: 'http://127.0.0.1:9',
            upstreamModel: 'claude-sonnet-4-5@20250929',
            credentials: { ambient: {} },
          },
        ] as never,
        { probe: { intervalSeconds: 5 } },
      ),
    ],
    // The metadata server of a pod whose node has none: nothing listens there.
    { GCE_METADATA_HOST: '127.0.0.1:9' },
  );
});

afterAll(async () => {
  await gw?.stop();
  await spare?.close();
});

// eslint-disable-next-line @typescript-eslint/no-explicit-any
const json = async (path: string): Promise<any> => (await fetch(`${gw.url}${path}`)).json();

describe('a credential that cannot be obtained', () => {
  it('fails the call over with credential_error, and the status page says why after two probe rounds', async () => {
    const res = await fetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${b.keys.builder}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'claude-vertex', max_tokens: 20, messages: [{ role: 'user', content: 'hi' }] }),
    });
    expect(res.status).toBe(200);
    await res.text();
    expect(res.headers.get('x-svc-upstream')).toBe('spare');
    expect(res.headers.get('x-svc-fallback-reason')).toBe('credential_error');

    let text = '';
    await until(
      async () => {
        const incidents = (await json('/status/api/v2/incidents.json')) as { incidents: Array<{ incident_updates: Array<{ body: string }> }> };
        text = JSON.stringify(incidents.incidents.flatMap((i) => i.incident_updates.map((u) => u.body)));
        return text.includes('credential error');
      },
      20_000,
      'an incident naming the credential error',
      500,
    );
    expect(text).toContain('vertex-only');
    expect(text).toContain('claude-vertex-only');
  }, 30_000);
});
