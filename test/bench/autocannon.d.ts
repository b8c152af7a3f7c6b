// The part of autocannon's API the bench uses (the package ships no types).
declare module 'autocannon' {
  import type { EventEmitter } from 'node:events';

  export interface Options {
    url: string | string[];
    connections?: number;
    duration?: number;
    method?: 'GET' | 'POST';
    headers?: Record<string, string>;
    body?: string | Buffer;
    pipelining?: number;
    timeout?: number;
  }

  export interface Result {
    errors: number;
    timeouts: number;
    non2xx: number;
    duration: number;
    requests: { total: number; average: number };
  }

  export interface Instance extends EventEmitter {
    stop(): void;
  }

  export default function autocannon(opts: Options, cb: (err: Error | null, result: Result) => void): Instance;
}
