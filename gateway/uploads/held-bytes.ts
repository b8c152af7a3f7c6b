// The bytes of one upload as the gateway holds them while the call runs: in memory (small uploads, the chunks as they
// came, never joined) or in a temporary file (spool.ts). Readers take what they need (a header's bytes, a fresh
// stream per upstream attempt) without caring where the bytes are.
import { createReadStream } from 'node:fs';
import { open, rm } from 'node:fs/promises';

export interface HeldBytes {
  readonly length: number;
  /** Bytes [from, to): fewer at the end of the upload. */
  slice(from: number, to: number): Promise<Buffer>;
  /** A fresh read from the start (each attempt of a fallback sends the upload again). */
  stream(): AsyncIterable<Buffer>;
  /** The whole upload as one buffer, for bodies that carry it inside JSON (base64). */
  whole(): Promise<Buffer>;
  /** Lets the bytes go (a temporary file is deleted). Safe to call more than once. */
  release(): Promise<void>;
}

export function memoryBytes(chunks: readonly Buffer[]): HeldBytes {
  let length = 0;
  const starts: number[] = [];
  for (const c of chunks) {
    starts.push(length);
    length += c.length;
  }
  const slice = (from: number, to: number): Buffer => {
    const end = Math.min(to, length);
    const parts: Buffer[] = [];
    for (let i = 0; i < chunks.length && from < end; i++) {
      const c = chunks[i] as Buffer;
      const s = starts[i] as number;
      if (s + c.length <= from) continue;
      parts.push(c.subarray(from - s, Math.min(c.length, end - s)));
      from = s + c.length;
    }
    return parts.length === 1 ? (parts[0] as Buffer) : Buffer.concat(parts);
  };
  return {
    length,
    slice: async (from, to) => slice(from, to),
    stream: async function* each() {
      yield* chunks;
    },
    whole: async () => (chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks)),
    release: async () => {},
  };
}

/** The bytes of a temporary file of `length` bytes, deleted by `release`. */
export function fileBytes(path: string, length: number): HeldBytes {
  let released: Promise<void> | null = null;
  return {
    length,
    async slice(from, to) {
      const want = Math.max(0, Math.min(to, length) - from);
      if (want === 0) return Buffer.alloc(0);
      const fh = await open(path, 'r');
      try {
        const b = Buffer.alloc(want);
        const { bytesRead } = await fh.read(b, 0, want, from);
        return b.subarray(0, bytesRead);
      } finally {
        await fh.close();
      }
    },
    // A read stream ends its file handle when iterated to the end or when its reader stops (the upstream call cut).
    stream: () => createReadStream(path, { highWaterMark: 256 * 1024 }),
    whole: async () => {
      const fh = await open(path, 'r');
      try {
        return await fh.readFile();
      } finally {
        await fh.close();
      }
    },
    release: () => (released ??= rm(path, { force: true })),
  };
}
