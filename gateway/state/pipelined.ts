// Many commands in one round trip instead of one each: what makes writing a config of 50,000 keys take a fraction of
// a second rather than tens (gateway/state/config-writer.ts). On one server: an ioredis pipeline (one write, the
// replies in order). On a Cluster a pipeline must stay on one node, so each command is sent without waiting for the
// one before: ioredis routes it to its slot's node, and every node's connection carries its share back to back.
// Commands of one call have no order among themselves: a caller that needs one step done before the next awaits
// between calls.
import { isCluster, type RedisClient } from './redis-connect.ts';

export type Command = readonly [string, ...Array<string | number>];

/** A Lua script run (EVALSHA), with the EVAL to fall back on when the server does not know the script yet. */
export interface ScriptCall {
  command: Command;
  unknownScript: () => Promise<unknown>;
}

type Reply = { ok: true; value: unknown } | { ok: false; error: Error };

async function sendAll(redis: RedisClient, commands: readonly Command[]): Promise<Reply[]> {
  if (commands.length === 0) return [];
  const settle = (p: Promise<unknown>): Promise<Reply> =>
    p.then(
      (value) => ({ ok: true, value }),
      (error: unknown) => ({ ok: false, error: error instanceof Error ? error : new Error(String(error)) }),
    );
  if (isCluster(redis)) return Promise.all(commands.map(([name, ...args]) => settle(redis.call(name, ...args))));
  const replies = (await redis.pipeline(commands.map((c) => [...c])).exec()) ?? [];
  return commands.map((_, i): Reply => {
    const [error, value] = replies[i] ?? [new Error('no reply'), null];
    return error ? { ok: false, error } : { ok: true, value };
  });
}

const unknownScript = (r: Reply): boolean => !r.ok && r.error.message.startsWith('NOSCRIPT');

/**
 * Sends every command at once and returns the replies in order, throwing the first error once all have answered.
 * A script the server does not know yet (a fresh Redis, a restarted or failed-over node) is run once by EVAL, which
 * teaches it to that node, and the rest are sent again: a few extra round trips, not one per command.
 */
export async function sendTogether(redis: RedisClient, ops: ReadonlyArray<Command | ScriptCall>): Promise<unknown[]> {
  const commands = ops.map((o) => ('command' in o ? o.command : o));
  const replies = await sendAll(redis, commands);
  let waiting = replies.flatMap((r, i) => (unknownScript(r) ? [i] : []));
  while (waiting.length > 0) {
    const [first, ...rest] = waiting;
    const op = ops[first as number];
    replies[first as number] = { ok: true, value: op && 'command' in op ? await op.unknownScript() : null };
    const again = await sendAll(
      redis,
      rest.map((i) => commands[i] as Command),
    );
    rest.forEach((i, j) => (replies[i] = again[j] as Reply));
    waiting = rest.filter((i) => unknownScript(replies[i] as Reply));
  }
  return replies.map((r) => {
    if (!r.ok) throw r.error;
    return r.value;
  });
}

/** `items` in slices of at most `size`. */
export function slices<T>(items: readonly T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}
