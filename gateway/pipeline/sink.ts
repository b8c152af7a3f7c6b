// Where a call's answer goes: the pipeline writes through this and knows nothing of HTTP. The fastify adapter is
// gateway/http/reply-sink.ts; tests can pass a sink of their own.

/** An SSE body being written: `write` returns a promise only when the reader is slow (back-pressure). */
export interface StreamWriter {
  write(text: string): Promise<void> | null;
  end(text?: string): void;
  /** True once the connection is gone: nothing more can be written. */
  readonly destroyed: boolean;
}

export interface CallSink {
  /** Headers for whatever answer follows, an error included (the x-svc-* route headers). */
  headers(h: Record<string, string>): void;
  /** A whole JSON answer. */
  json(status: number, headers: Record<string, string>, body: string): void;
  /** Starts a 200 event stream with these headers. */
  stream(headers: Record<string, string>): StreamWriter;
}
