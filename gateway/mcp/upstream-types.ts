// One request to an upstream MCP server and its answer, as upstream.ts and the built-in mock server speak them.
import type { Readable } from 'node:stream';

export interface UpstreamRequest {
  method: 'POST' | 'GET' | 'DELETE';
  body?: string;
  /** The upstream's own session id. */
  sessionId: string | null;
  protocolVersion: string | null;
  lastEventId?: string;
}

export interface UpstreamAnswer {
  status: number;
  contentType: string;
  sessionId: string | null;
  body: Readable;
}

/** An upstream that could not be reached or did not answer in time; its message names no URL or header. */
export class UpstreamFailed extends Error {
  readonly timeout: boolean;

  constructor(message: string, timeout: boolean) {
    super(message);
    this.timeout = timeout;
  }
}
