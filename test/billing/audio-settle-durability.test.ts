// SVC_SETTLE_DURABILITY=postgres for audio calls, as for chat (settle-durability.test.ts): a transcription's and a
// speech call's usage events are in the Postgres ledger by the time the caller has the answer's last byte (the last
// chunk waits for the settle), each once, with the unit it was billed in; the answer is byte for byte what it is
// without the setting.
import OpenAI, { toFile } from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { toneWav8 } from '../../gateway/providers/mock/audio-bytes.ts';
import { startFleet, type Fleet } from '../helpers/fleet.ts';
import { startPostgres, type TestPostgres } from '../helpers/postgres.ts';
import { startRedis, type TestRedis } from '../helpers/redis.ts';
import { setup } from './fixtures.ts';

const API = 'gateway.svc.dev/v1alpha1';
const audioRoute = (name: string, type: 'transcription' | 'speech', pricing: object): object => ({
  apiVersion: API,
  kind: 'ModelRoute',
  metadata: { name },
  spec: { type, pricing: { inputPerMTokUsd: 0, ...pricing }, targets: [{ name: `${name}-t`, provider: 'mock' }] },
});

const s = setup([{ name: 'acme', spec: { trialCreditUsd: 1 } }], [{ name: 'k', account: 'acme' }]);
const key = s.keys.k as string;
let redis: TestRedis;
let pg: TestPostgres;
let fleet: Fleet;
let client: OpenAI;

beforeAll(async () => {
  redis = await startRedis('audio-durable');
  pg = await startPostgres('audio-durable');
  const docs = [...s.docs, audioRoute('mock-whisper', 'transcription', { perMinuteUsd: 0.006 }), audioRoute('mock-tts', 'speech', { perMCharactersUsd: 15 })];
  fleet = await startFleet(1, redis, docs, { SVC_SETTLE_DURABILITY: 'postgres', DATABASE_URL: pg.url });
  client = new OpenAI({ baseURL: `${fleet.urls[0] as string}/v1`, apiKey: key, maxRetries: 0 });
}, 60_000);

afterAll(async () => {
  await fleet?.stop();
  await redis?.stop();
  await pg?.stop();
});

/** Served audio calls of acme in usage_events by endpoint, and event ids present more than once (must be none). */
async function ledgerRows(): Promise<{ rows: Record<string, number>; doubled: number }> {
  const r = await pg.pool.query<{ endpoint: string; n: number; doubled: number }>(
    `SELECT endpoint, count(*)::int AS n, (count(*) - count(DISTINCT event_id))::int AS doubled
       FROM usage_events WHERE account = 'acme' AND status = 200 GROUP BY endpoint`,
  );
  return { rows: Object.fromEntries(r.rows.map((x) => [x.endpoint, x.n])), doubled: r.rows.reduce((a, x) => a + x.doubled, 0) };
}

describe('SVC_SETTLE_DURABILITY=postgres with audio calls', () => {
  it('has each transcription and speech call in the ledger when its answer ends, once', async () => {
    for (let i = 1; i <= 3; i++) {
      const t = await client.audio.transcriptions.create({ file: (await toFile(toneWav8(1), 'clip.wav')) as File, model: 'mock-whisper' });
      expect(t.text.length).toBeGreaterThan(0);
      expect((await ledgerRows()).rows['audio.transcriptions']).toBe(i); // in the ledger when the answer came
      // Speech read chunk by chunk: the ledger's rows counted when the last byte arrived.
      const res = await client.audio.speech.create({ model: 'mock-tts', voice: 'alloy', input: `Line ${i} of the test.`, response_format: 'wav' });
      const reader = (res.body as ReadableStream<Uint8Array>).getReader();
      let bytes = 0;
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        bytes += value.length;
      }
      expect(bytes).toBeGreaterThan(44);
      expect((await ledgerRows()).rows['audio.speech']).toBe(i);
    }
    expect((await ledgerRows()).doubled).toBe(0);
    const units = await pg.pool.query<{ endpoint: string; unit: string | null }>(
      `SELECT DISTINCT endpoint, billed_unit AS unit FROM usage_events WHERE account = 'acme' ORDER BY endpoint`,
    );
    expect(units.rows).toEqual([
      { endpoint: 'audio.speech', unit: 'characters' },
      { endpoint: 'audio.transcriptions', unit: 'seconds' },
    ]);
  }, 120_000);
});
