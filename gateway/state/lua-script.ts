// Lua scripts from gateway/state/lua/, run by EVALSHA (one round trip), falling back to EVAL once when the server
// does not know the script yet (first use, or after a Redis restart).
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { Command, ScriptCall } from './pipelined.ts';
import type { RedisClient } from './redis-connect.ts';

const DIR = new URL('./lua/', import.meta.url);

export class LuaScript {
  readonly name: string;
  private readonly source: string;
  private readonly sha: string;

  /** EVALSHA_RO / EVAL_RO (Redis 7.0+): declared keys need only read access, so a read-only ACL user may run it. */
  private readonly readOnly: boolean;

  constructor(name: string, withLib = false, readOnly = false) {
    this.name = name;
    this.readOnly = readOnly;
    const body = readFileSync(new URL(`${name}.lua`, DIR), 'utf8');
    this.source = withLib ? `${readFileSync(new URL('lib.lua', DIR), 'utf8')}\n${body}` : body;
    this.sha = createHash('sha1').update(this.source).digest('hex');
  }

  /** The EVALSHA to send along with other commands (gateway/state/pipelined.ts); `run` when the server lacks the script. */
  command(keys: readonly string[], args: ReadonlyArray<string | number>): Command {
    return [this.readOnly ? 'evalsha_ro' : 'evalsha', this.sha, keys.length, ...keys, ...args];
  }

  async run(redis: RedisClient, keys: readonly string[], args: ReadonlyArray<string | number>): Promise<unknown> {
    try {
      if (this.readOnly) return await redis.evalsha_ro(this.sha, keys.length, ...keys, ...args);
      return await redis.evalsha(this.sha, keys.length, ...keys, ...args);
    } catch (err) {
      if (!(err instanceof Error) || !err.message.startsWith('NOSCRIPT')) throw err;
      if (this.readOnly) return redis.eval_ro(this.source, keys.length, ...keys, ...args);
      return redis.eval(this.source, keys.length, ...keys, ...args);
    }
  }
}

/** An integer from a Redis reply (bulk string or integer), 0 when absent. */
export function int(v: unknown): number {
  if (typeof v === 'number') return v;
  if (typeof v === 'string' && v !== '') return Number(v);
  return 0;
}

type Arg = string | number;

/**
 * A script with named KEYS and ARGV, in the order its header declares (`-- KEYS: a b c`, `-- ARGV: x y z`; a last
 * ARGV name starting with `...` takes the rest). Callers pass objects, never positions; a test checks every
 * script's names against its header, so the two cannot drift.
 */
export class NamedScript<K extends string, A extends string> {
  readonly name: string;
  readonly keyNames: readonly K[];
  readonly argNames: readonly A[];
  private readonly script: LuaScript;

  constructor(name: string, shape: { lib?: boolean; readOnly?: boolean; keys: readonly K[]; args: readonly A[] }) {
    this.name = name;
    this.script = new LuaScript(name, shape.lib === true, shape.readOnly === true);
    this.keyNames = shape.keys;
    this.argNames = shape.args;
  }

  run(redis: RedisClient, keys: Record<K, string>, args: Record<A, Arg | readonly Arg[]>): Promise<unknown> {
    return this.script.run(redis, this.keyList(keys), this.argList(args));
  }

  /** `run` with KEYS already in order (`keyList`): a caller that runs the script on every call keeps its list. */
  runListed(redis: RedisClient, keys: readonly string[], args: Record<A, Arg | readonly Arg[]>): Promise<unknown> {
    return this.script.run(redis, keys, this.argList(args));
  }

  /** One run of the script to send with others in one round trip (gateway/state/pipelined.ts). */
  call(redis: RedisClient, keys: Record<K, string>, args: Record<A, Arg | readonly Arg[]>): ScriptCall {
    const k = this.keyList(keys);
    const a = this.argList(args);
    return { command: this.script.command(k, a), unknownScript: () => this.script.run(redis, k, a) };
  }

  /** KEYS in the order of the script's header. */
  keyList(keys: Record<K, string>): string[] {
    return this.keyNames.map((k) => keys[k]);
  }

  // One loop, no array per argument: admit and settle build this on every call.
  private argList(args: Record<A, Arg | readonly Arg[]>): Arg[] {
    const out: Arg[] = [];
    for (const a of this.argNames) {
      const v = args[a];
      if (Array.isArray(v)) for (const x of v as readonly Arg[]) out.push(x);
      else out.push(v as Arg);
    }
    return out;
  }
}
