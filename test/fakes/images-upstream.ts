// A fake images upstream on 127.0.0.1 in OpenAI's wire format, at OpenAI's paths ({base}/v1/images/generations,
// /v1/images/edits) and Azure OpenAI's (/openai/deployments/{deployment}/images/...?api-version=, with its api-key
// header; /openai/v1/images/...). Answers as the models do: dall-e-3 (data[].url or b64_json, revised_prompt, no
// usage), the GPT image models (b64_json, size, quality, output_format, background, and usage with the input's text
// and image tokens), streamed as image_generation.* / image_edit.* events with partial images. An edit's form is read
// with the platform's own parser (undici's FormData), not the gateway's, and recorded: fields and files.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

export const PNG_1X1 = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';
export const AZURE_KEY = 'azure-images-key';

export interface ImageCall {
  path: string;
  headers: IncomingMessage['headers'];
  /** The JSON body, or the form's text fields. */
  body: Record<string, unknown>;
  files: Array<{ field: string; name: string; type: string; size: number; head: number[] }>;
}

export interface ImagesUpstream {
  url: string;
  calls: ImageCall[];
  /** The usage the GPT image models' answers report. */
  usage: { text: number; image: number; output: number };
  /** Held until opened (calls in flight together). */
  gate: Promise<void> | null;
  /** Connections open at the fake now (a cancelled call's socket must not stay open). */
  sockets(): number;
  close(): Promise<void>;
}

export async function startImagesUpstream(): Promise<ImagesUpstream> {
  const fake: ImagesUpstream = { url: '', calls: [], usage: { text: 12, image: 0, output: 4160 }, gate: null, sockets: () => open.size, close: async () => {} };
  const open = new Set<Socket>();
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => void answer(fake, req, Buffer.concat(chunks), res));
  });
  server.on('connection', (s: Socket) => {
    open.add(s);
    s.on('close', () => open.delete(s));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  fake.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  fake.close = () =>
    new Promise<void>((r) => {
      server.close(() => r());
      server.closeAllConnections();
    });
  return fake;
}

const json = (res: ServerResponse, status: number, body: unknown): void => {
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
};

async function readCall(req: IncomingMessage, raw: Buffer): Promise<ImageCall> {
  const path = req.url ?? '';
  const type = req.headers['content-type'] ?? '';
  if (!type.startsWith('multipart/form-data')) {
    return { path, headers: req.headers, body: JSON.parse(raw.toString('utf8') || '{}') as Record<string, unknown>, files: [] };
  }
  const form = await new Request('http://fake/', { method: 'POST', headers: { 'content-type': type }, body: raw }).formData();
  const body: Record<string, unknown> = {};
  const files: ImageCall['files'] = [];
  for (const [field, v] of form.entries()) {
    if (typeof v === 'string') body[field] = v;
    else files.push({ field, name: v.name, type: v.type, size: v.size, head: [...new Uint8Array(await v.arrayBuffer()).slice(0, 4)] });
  }
  return { path, headers: req.headers, body, files };
}

async function answer(fake: ImagesUpstream, req: IncomingMessage, raw: Buffer, res: ServerResponse): Promise<void> {
  const call = await readCall(req, raw);
  fake.calls.push(call);
  if (fake.gate) await fake.gate;
  const azure = call.path.startsWith('/openai/');
  if (azure && req.headers['api-key'] !== AZURE_KEY)
    return json(res, 401, { error: { code: '401', message: 'Access denied due to invalid subscription key.' } });
  if (azure && call.path.startsWith('/openai/deployments/') && !/\?api-version=[0-9a-z.-]+$/.test(call.path)) {
    return json(res, 404, { error: { code: '404', message: 'Resource not found' } });
  }
  const edit = /\/images\/edits(\?|$)/.test(call.path);
  if (!edit && !/\/images\/generations(\?|$)/.test(call.path)) return json(res, 404, { error: { message: `no route ${call.path}` } });
  const b = call.body;
  const model = azure && call.path.startsWith('/openai/deployments/') ? decodeURIComponent(call.path.split('/')[3] ?? '') : String(b.model);
  const n = Number(b.n ?? 1);
  const created = 1_767_225_600;
  if (model.startsWith('dall-e') || model.startsWith('dalle')) {
    const data = Array.from({ length: n }, () =>
      b.response_format === 'b64_json'
        ? { b64_json: PNG_1X1, revised_prompt: `A ${String(b.prompt)}` }
        : { url: 'https://images.example/img-1.png', revised_prompt: `A ${String(b.prompt)}` },
    );
    return json(res, 200, { created, data });
  }
  const size = typeof b.size === 'string' && b.size !== 'auto' ? b.size : '1024x1024';
  const quality = typeof b.quality === 'string' && b.quality !== 'auto' ? b.quality : 'high';
  const u = fake.usage;
  const imageIn = edit ? u.image : 0;
  const usage = {
    input_tokens: u.text + imageIn,
    input_tokens_details: { text_tokens: u.text, image_tokens: imageIn },
    output_tokens: u.output * n,
    total_tokens: u.text + imageIn + u.output * n,
  };
  const made = { background: 'opaque', output_format: 'png', quality, size };
  if (b.stream !== true && b.stream !== 'true') {
    return json(res, 200, { created, data: Array.from({ length: n }, () => ({ b64_json: PNG_1X1 })), ...made, usage });
  }
  const prefix = edit ? 'image_edit' : 'image_generation';
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  const partials = Number(b.partial_images ?? 0);
  for (let p = 0; p < partials; p++) {
    const type = `${prefix}.partial_image`;
    res.write(`event: ${type}\ndata: ${JSON.stringify({ type, b64_json: PNG_1X1, created_at: created, ...made, partial_image_index: p })}\n\n`);
  }
  const type = `${prefix}.completed`;
  res.end(`event: ${type}\ndata: ${JSON.stringify({ type, b64_json: PNG_1X1, created_at: created, ...made, usage })}\n\n`);
}
