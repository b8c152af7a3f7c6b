// Where an upload waits while its call runs. Small uploads stay in memory; past `aboveBytes` the bytes go to a file of
// their own in a private directory (mode 0700, made by the process, files 0600, created exclusively), so a hundred
// 25 MB uploads in flight cost disk, not a hundred copies in the heap. The route deletes the file when the call ends,
// whatever ended it (held-bytes.ts `release`); the directory is removed when the server closes.
import { randomBytes } from 'node:crypto';
import { createWriteStream, mkdirSync, mkdtempSync, rmSync, type WriteStream } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GatewayError } from '../errors/catalog.ts';
import { fileBytes, memoryBytes, type HeldBytes } from './held-bytes.ts';

/** Uploads larger than this go to disk (SVC_UPLOAD_SPOOL_ABOVE_BYTES). */
export const DEFAULT_SPOOL_ABOVE_BYTES = 1024 * 1024;

export interface SpoolSettings {
  /** The directory the private spool directory is made in (SVC_UPLOAD_SPOOL_DIR; default the OS's temp dir). */
  parent?: string;
  aboveBytes?: number;
}

const unwritable = (): GatewayError =>
  new GatewayError('store_unavailable', 'The gateway cannot keep the upload now (its upload spool is full or not writable); try again later.', {
    retryAfterSec: 5,
  });

export class Spool {
  readonly aboveBytes: number;
  private readonly parent: string;
  private made: string | null = null;

  constructor(settings: SpoolSettings = {}) {
    this.parent = settings.parent ?? tmpdir();
    this.aboveBytes = settings.aboveBytes ?? DEFAULT_SPOOL_ABOVE_BYTES;
  }

  /** The private directory, made on first use (mkdtemp makes it 0700). */
  private dir(): string {
    if (this.made === null) {
      mkdirSync(this.parent, { recursive: true });
      this.made = mkdtempSync(join(this.parent, 'svc-gateway-uploads-'));
    }
    return this.made;
  }

  /** A fresh temporary file's path and its write stream (exclusive create, 0600). */
  create(): { path: string; out: WriteStream } {
    let path: string;
    try {
      path = join(this.dir(), randomBytes(12).toString('hex'));
    } catch {
      throw unwritable();
    }
    return { path, out: createWriteStream(path, { flags: 'wx', mode: 0o600 }) };
  }

  writer(): SpoolWriter {
    return new SpoolWriter(this);
  }

  /** Removes the private directory and anything left in it (the server closes). */
  close(): void {
    if (this.made !== null) rmSync(this.made, { recursive: true, force: true });
    this.made = null;
  }
}

/**
 * Takes an upload's chunks as they arrive: in memory up to the spool's threshold, then all of them in a temporary
 * file. `write` returns a promise when the reader should pause until the disk caught up (back-pressure).
 */
export class SpoolWriter {
  private chunks: Buffer[] = [];
  private bytes = 0;
  private file: { path: string; out: WriteStream } | null = null;
  private failed: GatewayError | null = null;
  private dropped = false;
  private readonly spool: Spool;

  constructor(spool: Spool) {
    this.spool = spool;
  }

  write(c: Buffer): Promise<void> | null {
    if (this.failed || this.dropped) return null;
    this.bytes += c.length;
    if (this.file) return this.put(c);
    this.chunks.push(c);
    if (this.bytes <= this.spool.aboveBytes) return null;
    try {
      this.file = this.spool.create();
    } catch (err) {
      this.failed = err instanceof GatewayError ? err : unwritable();
      this.chunks = [];
      return null;
    }
    this.file.out.on('error', () => {
      this.failed ??= unwritable();
    });
    const held = this.chunks;
    this.chunks = [];
    let full = false;
    for (const h of held) full = !this.file.out.write(h) || full;
    return full ? this.drained() : null;
  }

  private put(c: Buffer): Promise<void> | null {
    return (this.file as { out: WriteStream }).out.write(c) ? null : this.drained();
  }

  /** Resolves once the file's buffer drained (or the file closed on an error). */
  private drained(): Promise<void> {
    const out = (this.file as { out: WriteStream }).out;
    return new Promise((resolve) => {
      const go = (): void => {
        out.off('drain', go);
        out.off('close', go);
        resolve();
      };
      out.on('drain', go);
      out.on('close', go);
    });
  }

  /** The bytes written, once the file (if any) is flushed; a disk failure is a 503 and the file is gone. */
  async done(): Promise<HeldBytes> {
    if (!this.file) {
      if (this.failed) throw this.failed;
      return memoryBytes(this.chunks);
    }
    const { path, out } = this.file;
    await new Promise<void>((resolve) => {
      if (out.closed) resolve();
      else out.end(() => resolve()).once('error', () => resolve());
    });
    const bytes = fileBytes(path, this.bytes);
    if (this.failed) {
      await bytes.release();
      throw this.failed;
    }
    return bytes;
  }

  /** Drops what was written (a refused or cut upload): the file closed and deleted. */
  async discard(): Promise<void> {
    this.dropped = true;
    this.chunks = [];
    if (!this.file) return;
    const { path, out } = this.file;
    await new Promise<void>((resolve) => {
      if (out.closed) resolve();
      else out.once('close', () => resolve()).destroy();
    });
    await fileBytes(path, 0).release();
  }
}
