// A streamed message with the official Anthropic SDK, through the gateway's /anthropic endpoint (any model, here the
// demo's mock-pro): `node examples/anthropic.mjs` with SVC_KEY set (a key whose plan opens the Anthropic endpoint, as
// npm start's demo-builder). SVC_URL: another gateway than npm start's.
import Anthropic from '@anthropic-ai/sdk';

const gateway = process.env.SVC_URL ?? 'http://127.0.0.1:8080';
const client = new Anthropic({ baseURL: `${gateway}/anthropic`, apiKey: process.env.SVC_KEY });
const stream = client.messages.stream({ model: 'mock-pro', max_tokens: 256, messages: [{ role: 'user', content: 'Hello' }] });
stream.on('text', (text) => process.stdout.write(text));
const message = await stream.finalMessage();
console.log(`\n[${message.model}, ${message.usage.output_tokens} output tokens, ${message.stop_reason}]`);
