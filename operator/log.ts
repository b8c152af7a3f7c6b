// The operator's log: one JSON object per line on stderr, Kubernetes style (capitalized, past tense, the object
// named in a field, e.g. {"msg":"Generated key","ApiKey":"team-a/ci-bot"}). Keys and peppers never reach it.
export type Level = 'error' | 'warn' | 'info' | 'debug';
const RANK: Record<Level, number> = { error: 0, warn: 1, info: 2, debug: 3 };

export type Fields = Record<string, unknown>;

export interface Logger {
  error(msg: string, fields?: Fields): void;
  warn(msg: string, fields?: Fields): void;
  info(msg: string, fields?: Fields): void;
  debug(msg: string, fields?: Fields): void;
  with(fields: Fields): Logger;
}

/** An error as one short line: client-node's ApiException message carries the whole response, headers included. */
function errorText(v: unknown): unknown {
  if (!(v instanceof Error)) return v;
  const { code, body } = v as { code?: unknown; body?: unknown };
  if (typeof code === 'number' && body !== undefined) {
    let message: unknown;
    try {
      message = (typeof body === 'string' ? JSON.parse(body) : (body as { message?: unknown })).message;
    } catch {
      message = undefined;
    }
    return `HTTP ${code}${typeof message === 'string' ? `: ${message}` : ''}`;
  }
  return code === undefined ? v.message : `${v.message} (code ${String(code)})`;
}

export function parseLevel(v: string | undefined): Level {
  if (v === undefined || v === '') return 'info';
  if (v in RANK) return v as Level;
  throw new Error(`LOG_LEVEL must be one of ${Object.keys(RANK).join(', ')}, got ${JSON.stringify(v)}`);
}

export function createLogger(level: Level, base: Fields = {}, sink: (line: string) => void = (l) => process.stderr.write(l)): Logger {
  const emit = (lvl: Level, msg: string, fields: Fields = {}): void => {
    if (RANK[lvl] > RANK[level]) return;
    const out: Fields = { level: lvl, time: new Date().toISOString(), msg, ...base };
    for (const [k, v] of Object.entries(fields)) out[k] = errorText(v);
    sink(`${JSON.stringify(out)}\n`);
  };
  return {
    error: (m, f) => emit('error', m, f),
    warn: (m, f) => emit('warn', m, f),
    info: (m, f) => emit('info', m, f),
    debug: (m, f) => emit('debug', m, f),
    with: (fields) => createLogger(level, { ...base, ...fields }, sink),
  };
}
