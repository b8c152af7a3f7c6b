// The seeded generator of hostile requests: bodies (nesting, numbers, wrong types, untranslatable fields, unicode,
// NUL, truncation, non-objects, prototype names, huge strings) and headers (keys in every wrong form, odd or doubled
// content types) for every endpoint. The same seed gives the same requests, so a failure can be replayed.
import { generateKey } from '../../gateway/contract/keys.ts';
import type { prng } from './harness.ts';

type Rng = ReturnType<typeof prng>;

export interface Endpoint {
  method: 'GET' | 'POST';
  path: string;
  /** Calls that go through admission (they take an RPM slot when admitted). */
  admits: boolean;
}

export interface FuzzCase {
  endpoint: Endpoint;
  path: string;
  headers: Array<[string, string]>;
  body: Buffer | undefined;
  /** What was done to the request, for failure reports. */
  what: string;
}

/** The endpoints of chat and Messages models (what every upstream kind serves). */
export const CHAT_ENDPOINTS: Endpoint[] = [
  { method: 'POST', path: '/v1/chat/completions', admits: true },
  { method: 'POST', path: '/v1/embeddings', admits: true },
  { method: 'POST', path: '/anthropic/v1/messages', admits: true },
  { method: 'POST', path: '/anthropic/v1/messages/count_tokens', admits: true },
];
export const MODEL_ENDPOINTS: Endpoint[] = [
  ...CHAT_ENDPOINTS,
  { method: 'POST', path: '/v1/completions', admits: true },
  { method: 'POST', path: '/v1/rerank', admits: true },
  { method: 'POST', path: '/cohere/v2/rerank', admits: true },
  { method: 'POST', path: '/v1/moderations', admits: true },
];
export const RESPONSES: Endpoint = { method: 'POST', path: '/v1/responses', admits: true };
export const READ_ENDPOINTS: Endpoint[] = [
  { method: 'GET', path: '/v1/models', admits: false },
  { method: 'GET', path: '/v1/models/{id}', admits: false },
  { method: 'GET', path: '/v1/me', admits: false },
  { method: 'GET', path: '/anthropic/v1/models', admits: false },
  { method: 'GET', path: '/anthropic/v1/models/{id}', admits: false },
];

const msgs = [{ role: 'user', content: 'Hello there' }];
const MODELS: Record<string, string[]> = {
  '/v1/chat/completions': ['chat-o', 'chat-a', 'mock-mini'],
  '/v1/embeddings': ['embed'],
  '/v1/completions': ['text-m'],
  '/v1/rerank': ['rerank-m'],
  '/cohere/v2/rerank': ['rerank-m'],
  '/v1/moderations': ['mod-m'],
  '/anthropic/v1/messages': ['chat-a', 'chat-o', 'mock-mini'],
  '/anthropic/v1/messages/count_tokens': ['chat-a', 'chat-o'],
  '/v1/responses': ['chat-o', 'chat-a', 'mock-mini'],
};
/** The fields each endpoint reads (the targets of wrong types and deep nesting). */
const FIELDS: Record<string, string[]> = {
  '/v1/chat/completions': [
    'model',
    'messages',
    'stream',
    'stream_options',
    'max_tokens',
    'max_completion_tokens',
    'metadata',
    'tools',
    'n',
    'temperature',
    'stop',
    'tool_choice',
    'response_format',
  ],
  '/v1/embeddings': ['model', 'input', 'dimensions', 'encoding_format', 'metadata'],
  '/v1/completions': ['model', 'prompt', 'suffix', 'echo', 'logprobs', 'n', 'best_of', 'stop', 'max_tokens', 'stream', 'metadata'],
  '/v1/rerank': ['model', 'query', 'documents', 'top_n', 'return_documents', 'metadata'],
  '/cohere/v2/rerank': ['model', 'query', 'documents', 'top_n', 'max_tokens_per_doc'],
  '/v1/moderations': ['model', 'input', 'metadata'],
  '/anthropic/v1/messages': [
    'model',
    'messages',
    'max_tokens',
    'stream',
    'system',
    'tools',
    'tool_choice',
    'metadata',
    'stop_sequences',
    'temperature',
    'top_p',
    'top_k',
    'thinking',
  ],
  '/anthropic/v1/messages/count_tokens': ['model', 'messages', 'system', 'tools', 'tool_choice', 'metadata'],
  '/v1/responses': [
    'model',
    'input',
    'instructions',
    'stream',
    'max_output_tokens',
    'tools',
    'metadata',
    'temperature',
    'previous_response_id',
    'store',
    'background',
  ],
};
const NUMERIC: Record<string, string[]> = {
  '/v1/chat/completions': ['max_tokens', 'max_completion_tokens', 'n', 'temperature', 'top_p', 'seed'],
  '/v1/embeddings': ['dimensions'],
  '/v1/completions': ['max_tokens', 'n', 'best_of', 'logprobs', 'temperature'],
  '/v1/rerank': ['top_n'],
  '/cohere/v2/rerank': ['top_n', 'max_tokens_per_doc'],
  '/v1/moderations': [],
  '/anthropic/v1/messages': ['max_tokens', 'temperature', 'top_p', 'top_k'],
  '/anthropic/v1/messages/count_tokens': ['max_tokens'],
  '/v1/responses': ['max_output_tokens', 'temperature', 'top_p'],
};

function baseBody(path: string, model: string): Record<string, unknown> {
  switch (path) {
    case '/v1/embeddings':
      return { model, input: 'Hello there' };
    case '/v1/completions':
      return { model, prompt: 'Hello there', suffix: '!', max_tokens: 32 };
    case '/v1/rerank':
    case '/cohere/v2/rerank':
      return { model, query: 'Hello there', documents: ['Hello', 'there'] };
    case '/v1/moderations':
      return { model, input: 'Hello there' };
    case '/anthropic/v1/messages':
      return { model, max_tokens: 32, messages: msgs };
    case '/anthropic/v1/messages/count_tokens':
      return { model, messages: msgs };
    case '/v1/responses':
      return { model, input: 'Hello there', max_output_tokens: 32 };
    default:
      return { model, messages: msgs, max_tokens: 32 };
  }
}

const HOSTILE_VALUES: unknown[] = [
  null,
  true,
  false,
  0,
  -1,
  1.5,
  1e308,
  -1e308,
  '',
  'x',
  '0',
  'true',
  [],
  [null],
  [[]],
  {},
  { type: 'text' },
  [{}],
  [1, 'a', null],
  { role: 'user' },
  { role: 'user', content: 5 },
  [{ role: 'wizard', content: 'x' }],
  [{ role: 'user', content: [{ type: 'image_url' }] }],
  'sk-svc-',
  '\u0000',
  '𝕏'.repeat(50),
  '\u202e\u200b\ufeff',
  { __proto__: null, constructor: 1 },
  ['__proto__'],
];
const RAW_NUMBERS = [
  '1e308',
  '-1e308',
  '1e999999',
  '-1e999999',
  '123456789012345678901234567890',
  '9007199254740993',
  '-0',
  '0.0000001',
  '1E-400',
  '-9007199254740993',
  '4294967297',
];
const PROTO_NAMES = ['__proto__', 'constructor', 'toString', 'hasOwnProperty', 'prototype', 'valueOf', '__defineGetter__'];
const UNICODE = ['héllo wörld', '𝕳𝖊𝖑𝖑𝖔 🎉🔥', 'مرحبا \u202eevil', '\u200b\u200d\ufeff', '\\ud800 lone', 'ﾟ･✿ヾ╲(｡◕‿◕｡)╱✿･ﾟ', '\uffff\ufffe', 'Ω'.repeat(1000)];

function nested(depth: number, kind: 'array' | 'object'): string {
  return kind === 'array' ? `${'['.repeat(depth)}0${']'.repeat(depth)}` : `${'{"a":'.repeat(depth)}0${'}'.repeat(depth)}`;
}

/** The body with `field` set to a raw JSON text (numbers and nestings JSON.stringify cannot produce). */
function withRaw(body: Record<string, unknown>, field: string, raw: string): string {
  return JSON.stringify({ ...body, [field]: '\u0001RAW\u0001' }).replace('"\\u0001RAW\\u0001"', raw);
}

type BodyMaker = (r: Rng, path: string, base: Record<string, unknown>) => { text: string | Buffer; what: string };

const BODY_MAKERS: Array<[weight: number, name: string, make: BodyMaker]> = [
  [
    14,
    'valid',
    (r, path, b) => {
      const streams = path !== '/v1/embeddings' && path !== '/anthropic/v1/messages/count_tokens' && r.int(2) === 0;
      return { text: JSON.stringify(streams ? { ...b, stream: true } : b), what: streams ? 'stream' : 'plain' };
    },
  ],
  [
    6,
    'deep-unknown',
    (r, _p, b) => {
      const depth = r.pick([129, 200, 1000, 10_000]);
      const kind = r.pick(['array', 'object'] as const);
      return { text: withRaw(b, 'x', nested(depth, kind)), what: `x ${kind} ${depth}` };
    },
  ],
  [
    6,
    'deep-known',
    (r, path, b) => {
      const field = r.pick(FIELDS[path] ?? ['model']);
      const depth = r.pick([129, 1000, 10_000]);
      const kind = r.pick(['array', 'object'] as const);
      if (field === 'messages' && r.int(2) === 0) {
        return {
          text: withRaw(b, 'messages', `[{"role":"user","content":[{"type":"text","text":"hi","x":${nested(depth, kind)}}]}]`),
          what: `content block ${kind} ${depth}`,
        };
      }
      return { text: withRaw(b, field, nested(depth, kind)), what: `${field} ${kind} ${depth}` };
    },
  ],
  [
    5,
    'huge-number',
    (r, path, b) => {
      const field = r.pick(NUMERIC[path] ?? ['max_tokens']);
      const n = r.pick(RAW_NUMBERS);
      return { text: withRaw(b, field, n), what: `${field}=${n}` };
    },
  ],
  [
    10,
    'wrong-type',
    (r, path, b) => {
      const field = r.pick(FIELDS[path] ?? ['model']);
      const v = r.pick(HOSTILE_VALUES);
      return { text: JSON.stringify({ ...b, [field]: v }), what: `${field}=${JSON.stringify(v)?.slice(0, 40)}` };
    },
  ],
  [
    3,
    'untranslatable',
    (r, path, b) => {
      if (path === '/v1/chat/completions') return { text: JSON.stringify({ ...b, model: 'chat-a', n: r.pick([2, 3, 0]) }), what: 'n to Anthropic' };
      const doc = { type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: 'JVBERi0xLjQK' } };
      if (path.startsWith('/anthropic'))
        return {
          text: JSON.stringify({ ...b, model: 'chat-o', messages: [{ role: 'user', content: [doc, { type: 'text', text: 'hi' }] }] }),
          what: 'document to OpenAI',
        };
      return { text: JSON.stringify({ ...b, model: 'chat-a', input: [{ type: 'item_reference', id: 'x' }] }), what: 'untranslatable item' };
    },
  ],
  [
    4,
    'unicode',
    (r, path, b) => {
      const s = r.pick(UNICODE);
      const text = JSON.stringify(path === '/v1/embeddings' ? { ...b, input: s } : { ...b, messages: [{ role: 'user', content: s }], input: s });
      return { text: r.int(3) === 0 ? text.replace('Hello', '\\udc00\\ud800') : text, what: `unicode ${s.slice(0, 10)}` };
    },
  ],
  [
    3,
    'nul',
    (r, _p, b) => {
      const j = JSON.stringify(b);
      if (r.int(2) === 0) return { text: j.replace('Hello', 'He\\u0000llo').replace(String(b.model), `${String(b.model)}\\u0000`), what: 'escaped NUL' };
      return { text: Buffer.from(j.replace('Hello', 'He\u0000llo'), 'utf8'), what: 'raw NUL byte' };
    },
  ],
  [
    5,
    'truncated',
    (r, _p, b) => {
      const j = JSON.stringify(b);
      const at = 1 + r.int(j.length - 1);
      return { text: j.slice(0, at), what: `cut at ${at}` };
    },
  ],
  [2, 'empty', () => ({ text: '', what: 'empty body' })],
  [
    4,
    'non-object',
    (r, _p, b) => {
      const t = r.pick([`[${JSON.stringify(b)}]`, '[]', '"hello"', '123', 'null', 'true', '{}', '[[]]']);
      return { text: t, what: t.slice(0, 20) };
    },
  ],
  [
    5,
    'proto',
    (r, _p, b) => {
      const name = r.pick(PROTO_NAMES);
      const kind = r.int(3);
      if (kind === 0) return { text: JSON.stringify({ ...b, model: name }), what: `model ${name}` };
      if (kind === 1) return { text: JSON.stringify(b).replace('{', '{"__proto__":{"polluted":1,"model":"chat-o"},'), what: '__proto__ key' };
      return { text: JSON.stringify(b).replace('{', '{"constructor":{"prototype":{"polluted":1}},'), what: 'constructor key' };
    },
  ],
  [
    3,
    'long',
    (r, path, b) => {
      const n = r.pick([100_000, 1_000_000, 3_000_000]);
      const kind = r.int(3);
      if (kind === 0) return { text: JSON.stringify({ ...b, model: 'm'.repeat(n) }), what: `model of ${n}` };
      if (kind === 1) return { text: JSON.stringify({ ...b, metadata: { task_type: 't'.repeat(n) } }), what: `task_type of ${n}` };
      const s = 'lorem ipsum '.repeat(Math.ceil(n / 12));
      return {
        text: JSON.stringify(path === '/v1/embeddings' ? { ...b, input: s } : { ...b, messages: [{ role: 'user', content: s }], input: s }),
        what: `content of ${s.length}`,
      };
    },
  ],
  [
    5,
    'max-tokens',
    (r, path, b) => {
      const field = path === '/v1/responses' ? 'max_output_tokens' : 'max_tokens';
      const v = r.pick([-1, 0, 1, 2 ** 31, Number.MAX_SAFE_INTEGER, 1.5, '100', null, 1e9, -(2 ** 53)]);
      return { text: JSON.stringify({ ...b, [field]: v }), what: `${field}=${String(v)}` };
    },
  ],
  [
    4,
    'stream-value',
    (r, _p, b) => {
      const v = r.pick(['true', 1, 0, {}, [], 'yes', null, 'false']);
      return { text: JSON.stringify({ ...b, stream: v }), what: `stream=${JSON.stringify(v)}` };
    },
  ],
  [
    2,
    'bad-utf8',
    (_r, _p, b) => {
      const j = Buffer.from(JSON.stringify(b), 'utf8');
      const i = j.indexOf('Hello');
      if (i >= 0) j.set([0xff, 0xfe, 0xc3], i);
      return { text: j, what: 'invalid UTF-8' };
    },
  ],
  [2, 'dup-keys', (_r, _p, b) => ({ text: JSON.stringify(b).replace('{', '{"model":{"x":1},"messages":7,'), what: 'duplicate keys' })],
];

const TOTAL_WEIGHT = BODY_MAKERS.reduce((s, [w]) => s + w, 0);

function pickBody(r: Rng): [string, BodyMaker] {
  let x = r.int(TOTAL_WEIGHT);
  for (const [w, name, make] of BODY_MAKERS) {
    if (x < w) return [name, make];
    x -= w;
  }
  throw new Error('unreachable');
}

function auth(r: Rng, key: string, path: string): { headers: Array<[string, string]>; what: string } {
  const valid =
    path.startsWith('/anthropic') && r.int(2) === 0 ? (['x-api-key', key] as [string, string]) : (['authorization', `Bearer ${key}`] as [string, string]);
  if (r.int(100) < 55) return { headers: [valid], what: valid[0] };
  const bad = key.slice(0, -1) + (key.endsWith('A') ? 'B' : 'A');
  const variants: Array<[string, Array<[string, string]>]> = [
    ['no key', []],
    ['malformed', [['authorization', 'Bearer sk-svc-short']]],
    ['bad checksum', [['authorization', `Bearer ${bad}`]]],
    ['unknown key', [['authorization', `Bearer ${UNKNOWN_KEY}`]]],
    ['no Bearer', [['authorization', key]]],
    ['Basic', [['authorization', `Basic ${Buffer.from(`user:${key}`).toString('base64')}`]]],
    ['empty Bearer', [['authorization', 'Bearer ']]],
    [
      'two keys, valid first',
      [
        ['authorization', `Bearer ${key}`],
        ['authorization', 'Bearer sk-svc-short'],
      ],
    ],
    [
      'two keys, valid second',
      [
        ['authorization', 'Bearer sk-svc-short'],
        ['authorization', `Bearer ${key}`],
      ],
    ],
    ['lowercase bearer', [['authorization', `bearer ${key}`]]],
    ['tab', [['authorization', `Bearer\t${key}`]]],
    [
      'two x-api-key',
      [
        ['x-api-key', 'sk-svc-short'],
        ['x-api-key', key],
      ],
    ],
    ['8 KB key', [['authorization', `Bearer sk-svc-${'a'.repeat(8000)}`]]],
    ['latin1 key', [['authorization', 'Bearer sk-svc-\u00fc\u00e9']]],
    ['key in x-api-key on /v1', [['x-api-key', key]]],
  ];
  const [what, headers] = r.pick(variants);
  return { headers, what };
}

const UNKNOWN_KEY = generateKey();

function contentType(r: Rng): { headers: Array<[string, string]>; what: string } {
  if (r.int(100) < 60) return { headers: [['content-type', 'application/json']], what: 'json' };
  const variants: Array<Array<[string, string]>> = [
    [['content-type', 'text/plain']],
    [],
    [['content-type', 'application/x-www-form-urlencoded']],
    [['content-type', 'multipart/form-data; boundary=xyz']],
    [['content-type', 'application/json; charset=utf-16']],
    [['content-type', 'application/json; charset=latin1']],
    [['content-type', '']],
    [['content-type', 'application/xml']],
    [
      ['content-type', 'application/json'],
      ['content-type', 'text/plain'],
    ],
    [['content-type', 'application/json, text/plain']],
    [['content-type', '*/*']],
    [['content-type', 'application/json;;;']],
    [
      ['content-type', 'text/plain'],
      ['content-length', '0'],
    ],
  ];
  const headers = r.pick(variants);
  return { headers, what: headers.map(([, v]) => v).join(' + ') || 'none' };
}

const IDS = [
  'chat-o',
  'embed',
  'mock-mini',
  '__proto__',
  'constructor',
  'toString',
  'hasOwnProperty',
  '%00',
  '..%2F..%2Fetc%2Fpasswd',
  'a'.repeat(3000),
  encodeURIComponent('𝕏ü'),
  '%ff%fe',
  '..',
  'chat-o%00',
  'chat-o?x=1',
  '%2e%2e',
  'chat-o/extra',
  '%E0%A4%A',
];
const QUERIES = [
  '',
  '?limit=abc',
  '?limit=-1',
  '?limit=1e9',
  '?after_id=__proto__',
  '?before_id=constructor',
  '?limit=0',
  '?limit=2&after_id=chat-a',
  '?limit[]=1',
  '?__proto__[x]=1',
];

export function fuzzCase(r: Rng, key: string, endpoints: Endpoint[]): FuzzCase {
  const endpoint = r.int(100) < 85 ? r.pick(endpoints.filter((e) => e.method === 'POST')) : r.pick(READ_ENDPOINTS);
  let path = endpoint.path;
  if (path.includes('{id}')) path = path.replace('{id}', r.pick(IDS));
  else if (endpoint.method === 'GET' && path.endsWith('/models')) path += r.pick(QUERIES);
  const a = auth(r, key, path);
  if (endpoint.method === 'GET') return { endpoint, path, headers: a.headers, body: undefined, what: `GET ${path.slice(0, 60)} [${a.what}]` };
  const [kind, make] = pickBody(r);
  const model = r.pick(MODELS[path] ?? ['chat-o']);
  const made = make(r, path, baseBody(path, model));
  const ct = contentType(r);
  const body = typeof made.text === 'string' ? Buffer.from(made.text, 'utf8') : made.text;
  const hasLength = ct.headers.some(([k]) => k === 'content-length');
  const headers: Array<[string, string]> = [...a.headers, ...ct.headers, ...(hasLength ? [] : [['content-length', String(body.length)] as [string, string]])];
  return { endpoint, path, headers, body, what: `${kind}: ${made.what} [${a.what}; ${ct.what}]` };
}
