// Cost curve: a call's CPU against the prompt's size (1 KB to 1 MB), on chat completions and on Messages, each passed
// through (chat to an OpenAI-wire target, Messages to an Anthropic one) and translated (the other way round). One
// gateway process on its in-memory store; the OpenAI-wire upstream is the bench's, the Anthropic one a fake of the
// Anthropic wire in the bench's own process (neither counted). One call at a time, so the figure is the call's own.
import { startFakeAnthropic } from '../fakes/anthropic-upstream.ts';
import { route } from '../helpers/manifests.ts';
import { Client, serial, stats } from './load.ts';
import { cpuSeconds, type Proc } from './procs.ts';
import { f2, load, n, pointsOf, table, type Bounds } from './scale-common.ts';
import { CHAT_PATH, gateway, type Subject } from './subjects.ts';

export const PROMPT_POINTS_KB = [1, 10, 100, 1000];
const MESSAGES_PATH = '/anthropic/v1/messages';

interface Way {
  name: string;
  path: string;
  model: string;
  body: (prompt: string) => string;
}

const chat = (model: string) => (prompt: string) => JSON.stringify({ model, messages: [{ role: 'user', content: prompt }], max_tokens: 64 });
const messages = (model: string) => (prompt: string) => JSON.stringify({ model, max_tokens: 64, messages: [{ role: 'user', content: prompt }] });

const WAYS: Way[] = [
  { name: 'chat, passed through', path: CHAT_PATH, model: 'bench-chat', body: chat('bench-chat') },
  { name: 'chat, translated to Messages', path: CHAT_PATH, model: 'scale-claude', body: chat('scale-claude') },
  { name: 'Messages, passed through', path: MESSAGES_PATH, model: 'scale-claude', body: messages('scale-claude') },
  { name: 'Messages, translated to chat', path: MESSAGES_PATH, model: 'bench-chat', body: messages('bench-chat') },
];

/** Words, about `kb` KB of them. */
function prompt(kb: number): string {
  const words = 'the quick brown fox jumps over a lazy dog and keeps running ';
  return words.repeat(Math.ceil((kb * 1024) / words.length)).slice(0, kb * 1024);
}

/** One way at one size: the gateway's CPU per call, one call at a time, and the calls' median wall time. */
async function onePoint(s: Subject, gw: Proc, way: Way, kb: number, b: Bounds): Promise<string> {
  const c = new Client({ urls: s.urls, path: way.path, headers: { ...s.headers, 'content-type': 'application/json' }, body: way.body(prompt(kb)) }, 1);
  try {
    const first = await c.text();
    if (first.status !== 200) throw new Error(`${way.name}, ${kb} KB: the gateway answered ${first.status}: ${first.body.slice(0, 300)}`);
    await serial(c, Math.min(300, b.pointMs), 20);
    const cpu0 = cpuSeconds(gw.pid);
    const r = await serial(c, 2 * b.pointMs);
    const cpu = cpuSeconds(gw.pid) - cpu0;
    const st = stats(r.total);
    return `${Math.round((cpu / Math.max(1, st.count)) * 1e6)} µs (p50 ${f2(st.p50)} ms, ${st.count} calls${r.errors ? `, ${r.errors} errors` : ''})`;
  } finally {
    await c.close();
  }
}

export async function promptCurve(up: Proc, b: Bounds, log: (l: string) => void): Promise<string> {
  const before = load();
  const anthropic = await startFakeAnthropic('scale-anthropic');
  const timeouts = { connectMs: 2000, firstByteMs: 30_000, idleMs: 30_000, totalMs: 60_000 };
  const s = await gateway(up, {
    name: 'gateway',
    processes: 1,
    extra: () => [route('scale-claude', [{ name: 'claude', provider: 'anthropic', baseUrl: anthropic.baseUrl, upstreamModel: 'claude-up', timeouts }])],
  });
  const gw = s.procs[0] as Proc;
  const sizes = pointsOf(PROMPT_POINTS_KB, b);
  const cells = new Map<string, string>();
  try {
    for (const way of WAYS) {
      for (const kb of sizes) {
        log(`prompt size: ${way.name}, ${n(kb)} KB...`);
        cells.set(`${way.name}|${kb}`, await onePoint(s, gw, way, kb, b));
        anthropic.calls.length = 0; // the fake keeps every request it got: not 1 MB bodies by the hundred
      }
    }
  } finally {
    await gw.stop();
    await anthropic.close();
  }
  return table(
    'A call against the size of its prompt',
    before,
    ['prompt', ...WAYS.map((w) => `${w.name}: gateway CPU per call`)],
    sizes.map((kb) => [`${n(kb)} KB`, ...WAYS.map((w) => cells.get(`${w.name}|${kb}`) ?? '')]),
    ["One call at a time; the gateway's CPU (user + system, /proc, 10 ms ticks) over the calls made, and their median wall time."],
  );
}
