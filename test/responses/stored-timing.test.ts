// The write of a stored response never delays its answer, and a read right after the answer finds it: with a store
// whose writes are held back by the test, the answer (JSON or the whole stream) arrives while its write is still
// pending, and a GET sent then waits for that write and returns the record.
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MemoryResponseStore } from '../../gateway/stored-responses/memory.ts';
import type { StoredResponse } from '../../gateway/stored-responses/types.ts';
import { startStoredEnv, type StoredEnv } from './stored-setup.ts';

/** A memory store whose writes wait until the test opens the gate. */
class GatedStore extends MemoryResponseStore {
  gate: Promise<void> = Promise.resolve();
  writing = 0;
  override async put(r: StoredResponse, now: number): Promise<void> {
    this.writing++;
    await this.gate;
    this.writing--;
    return super.put(r, now);
  }
}

let env: StoredEnv;
let store: GatedStore;
let client: OpenAI;

beforeAll(async () => {
  store = new GatedStore();
  env = await startStoredEnv({ store });
  client = new OpenAI({ baseURL: `${env.gw.url}/v1`, apiKey: env.keys.builder, maxRetries: 0 });
});

afterAll(async () => {
  await env?.close();
});

describe.each([false, true])('stored responses, stream %s', (stream) => {
  it('answers before the write is done; a GET sent then waits for it and finds the response', async () => {
    let open = (): void => {};
    store.gate = new Promise<void>((r) => (open = r));
    try {
      const r = stream
        ? await client.responses.stream({ model: 'gpt-chat', input: 'Hold the write' }).finalResponse()
        : await client.responses.create({ model: 'gpt-chat', input: 'Hold the write' });
      expect(store.writing).toBe(1);
      let got: OpenAI.Responses.Response | null = null;
      const read = client.responses.retrieve(r.id).then((x) => (got = x));
      await new Promise((res) => setTimeout(res, 200));
      expect(got).toBeNull();
      open();
      await read;
      expect((got as OpenAI.Responses.Response | null)?.id).toBe(r.id);
      expect(store.writing).toBe(0);
    } finally {
      open();
    }
  });
});
