// The first call with the official openai SDK: `node examples/quickstart.mjs` from the repository, after `npm ci`,
// with SVC_KEY set to a key of the gateway (npm start prints the demo ones). SVC_URL: another gateway than npm start's.
import OpenAI from 'openai';

const gateway = process.env.SVC_URL ?? 'http://127.0.0.1:8080';
const client = new OpenAI({ baseURL: `${gateway}/v1`, apiKey: process.env.SVC_KEY });
const completion = await client.chat.completions.create({ model: 'mock-mini', messages: [{ role: 'user', content: 'Hello' }] });
console.log(completion.choices[0].message.content);
