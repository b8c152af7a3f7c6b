// An audio or image call's usage row says the unit it is counted in beside tokens (billed_unit, billed_units): the
// seconds a transcription's file holds, the characters of a speech's input, the images an image call returned. A
// standalone gateway with DATABASE_URL writes the rows; the mock provider answers.
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '../helpers/exporter.ts';
import { writeManifests } from '../helpers/fleet.ts';
import { account, apiKey, plan, route } from '../helpers/manifests.ts';
import { startPostgres, type TestPostgres } from '../helpers/postgres.ts';
import { ROOT, startGatewayProcess, type GatewayProcess } from '../helpers/process.ts';

let db: TestPostgres;
let gw: GatewayProcess;
const k = apiKey('k', 'acme');

beforeAll(async () => {
  db = await startPostgres('usage_audio_units', { own: true });
  const docs = [
    plan('builder', { tier: 2 }),
    account('acme', 'builder', { trialCreditUsd: 10 }),
    ...k.docs,
    route('whisper', [{ name: 'm-whisper', provider: 'mock' }], { type: 'transcription', pricing: { inputPerMTokUsd: 0, perMinuteUsd: 0.006 } }),
    route('tts', [{ name: 'm-tts', provider: 'mock' }], { type: 'speech', pricing: { inputPerMTokUsd: 0, perMCharactersUsd: 15 } }),
    route('img', [{ name: 'm-img', provider: 'mock' }], { type: 'image', pricing: { inputPerMTokUsd: 0, perImage: [{ size: '1024x1024', usd: 0.04 }] } }),
  ];
  gw = await startGatewayProcess({ SVC_CONFIG: writeManifests(docs), DATABASE_URL: db.url });
}, 120_000);

afterAll(async () => {
  await gw?.stop();
  await db?.stop();
});

describe('usage_events billed units', () => {
  it('records seconds for a transcription, characters for a speech and images for an image call', async () => {
    const form = new FormData();
    form.set('model', 'whisper');
    form.set('file', new Blob([readFileSync(`${ROOT}gateway/config/demo-clip.wav`)]), 'clip.wav');
    const auth = { authorization: `Bearer ${k.key}` };
    const t = await fetch(`${gw.url}/v1/audio/transcriptions`, { method: 'POST', headers: auth, body: form });
    expect(t.status).toBe(200);
    const s = await fetch(`${gw.url}/v1/audio/speech`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'tts', input: 'twelve chars', voice: 'alloy', response_format: 'wav' }),
    });
    expect(s.status).toBe(200);
    await s.arrayBuffer();
    const i = await fetch(`${gw.url}/v1/images/generations`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'img', prompt: 'two moons', n: 2, size: '1024x1024' }),
    });
    expect(i.status).toBe(200);
    await i.arrayBuffer();
    await waitFor(async () => (await db.pool.query('SELECT 1 FROM usage_events')).rowCount === 3, 30_000, '3 rows written');
    const rows = await db.pool.query('SELECT endpoint, billed_unit, billed_units::int AS units, cost_nano::int AS cost FROM usage_events ORDER BY endpoint');
    expect(rows.rows).toEqual([
      { endpoint: 'audio.speech', billed_unit: 'characters', units: 12, cost: 12 * 15_000 },
      { endpoint: 'audio.transcriptions', billed_unit: 'seconds', units: 1, cost: 100_000 },
      { endpoint: 'images.generations', billed_unit: 'images', units: 2, cost: 2 * 40_000_000 },
    ]);
    // The daily rollup and the spend-by-kind view (the dashboards') carry each kind's units.
    const kinds = await db.pool.query(
      `SELECT kind, requests::int, audio_seconds::int, characters::int, images::int, batch_requests::int, cost_usd::text
         FROM usage_spend_by_kind_daily ORDER BY kind`,
    );
    expect(kinds.rows).toEqual([
      { kind: 'image', requests: 1, audio_seconds: 0, characters: 0, images: 2, batch_requests: 0, cost_usd: '0.080000000' },
      { kind: 'speech', requests: 1, audio_seconds: 0, characters: 12, images: 0, batch_requests: 0, cost_usd: '0.000180000' },
      { kind: 'transcription', requests: 1, audio_seconds: 1, characters: 0, images: 0, batch_requests: 0, cost_usd: '0.000100000' },
    ]);
  });
});
