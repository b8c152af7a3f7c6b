// A streamed Responses API call with the official openai SDK: `node examples/responses.mjs` with SVC_KEY set (npm
// start prints the demo keys). SVC_URL: another gateway than npm start's.
import OpenAI from 'openai';

const gateway = process.env.SVC_URL ?? 'http://127.0.0.1:8080';
const client = new OpenAI({ baseURL: `${gateway}/v1`, apiKey: process.env.SVC_KEY });
const stream = client.responses.stream({ model: 'mock-pro', input: 'Hello' });
stream.on('response.output_text.delta', (e) => process.stdout.write(e.delta));
const response = await stream.finalResponse();
console.log(`\n[${response.model}, ${response.usage.output_tokens} output tokens, ${response.status}]`);
