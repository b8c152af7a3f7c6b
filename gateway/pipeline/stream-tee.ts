// A copy of what a stream wrote to the client, for a trace that records completions (a ModelRoute with
// spec.tracing.captureContent): the first MAX characters and the last write (which holds the Responses API's
// response.completed), nothing more, whatever the length of the stream.
import type { StreamWriter } from './sink.ts';

const MAX = 1 << 20;

export class StreamTee implements StreamWriter {
  private head = '';
  private last = '';
  private over = false;
  private readonly inner: StreamWriter;

  constructor(inner: StreamWriter) {
    this.inner = inner;
  }

  get destroyed(): boolean {
    return this.inner.destroyed;
  }

  private keep(text: string): void {
    if (!this.over && this.head.length + text.length <= MAX) this.head += text;
    else {
      this.over = true;
      this.last = text;
    }
  }

  write(text: string): Promise<void> | null {
    this.keep(text);
    return this.inner.write(text);
  }

  end(text?: string): void {
    if (text) this.keep(text);
    this.inner.end(text);
  }

  /** What was kept: the head, and past the bound the last write (whole events: the writes are). */
  text(): string {
    return this.over ? this.head + this.last : this.head;
  }
}
