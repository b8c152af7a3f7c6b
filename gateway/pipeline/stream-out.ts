// Step 5 for streams: write each upstream event through as it arrives, end with an explicit error event on
// any failure (never a clean end after a cut), and report what was served.
import { scrubberFor, type Scrubber } from '../providers/scrub.ts';
import type { StreamTranslator, Usage } from '../translate/types.ts';
import type { Served } from './dispatch.ts';
import type { StreamWriter } from './sink.ts';

export interface StreamResult {
  outcome: 'complete' | 'upstream_error' | 'client_closed' | 'shutting_down';
  usage: Usage;
  /** Upstream events seen: an estimate of output tokens when usage never arrived. */
  events: number;
  message: string | null;
}

export interface StreamCall {
  clientGone: () => boolean;
  cancel?: AbortSignal;
  /** The final event (and any after it) goes out in the writer's end, which may hold it (pipeline/settle-gate.ts). */
  holdEnd?: boolean;
}

/** `cancel` aborts the upstream call: when the client is not gone, the gateway is ending the call (shutdown). */
export async function pipeStream(
  served: Extract<Served, { kind: 'stream' }>,
  tr: StreamTranslator,
  res: StreamWriter,
  call: StreamCall,
): Promise<StreamResult> {
  const { clientGone, cancel, holdEnd } = call;
  let events = 0;
  let scrubber: Scrubber | undefined;
  // Made once, when an error text first needs it.
  const scrub = (text: string): string => (scrubber ??= scrubberFor(served.target, served.sent?.())).scrub(text);
  const result = (outcome: StreamResult['outcome'], message: string | null): StreamResult => ({ outcome, usage: tr.usage(), events, message });
  // With holdEnd, the event that ends the stream ([DONE], message_stop, an upstream's error event) and any after it
  // are held back and written in the end.
  let held = '';
  try {
    let pending = served.first;
    for (;;) {
      // The events of one upstream read go out in one write: each chunk passes as it arrives, one syscall for it.
      let out = '';
      for (const ev of pending) {
        events++;
        const ended = tr.complete;
        const piece = tr.event(ev);
        // An upstream's error event may echo the credential it was sent: scrubbed (only then: it ends the stream).
        const text = tr.failed ? scrub(piece) : piece;
        if (holdEnd && (ended || tr.complete)) held += text;
        else out += text;
      }
      const wait = out === '' || res.destroyed ? null : res.write(out);
      if (wait) await wait;
      if (clientGone()) return result('client_closed', null);
      if (tr.complete) break;
      const next = await served.rest.next();
      if (next.done) break;
      pending = served.parser.push(next.value);
    }
  } catch (err) {
    if (clientGone()) return result('client_closed', null);
    const end = { res, tr, result };
    if (cancel?.aborted) return endWithError(end, (cancel.reason as Error).message, 'shutting_down');
    return endWithError(end, scrub(`The upstream stream failed: ${(err as Error).message || 'error'}`), 'upstream_error');
  } finally {
    served.abort();
  }
  if (!tr.complete || served.parser.pending) {
    if (held !== '' && !res.destroyed) void res.write(held);
    return endWithError({ res, tr, result }, 'The upstream closed the stream before it was complete.', 'upstream_error');
  }
  if (tr.failed) {
    res.end(held || undefined);
    return result('upstream_error', 'The upstream ended the stream with an error.');
  }
  res.end(held + tr.finish());
  return result('complete', null);
}

function endWithError(
  end: {
    res: StreamWriter;
    tr: StreamTranslator;
    result: (o: StreamResult['outcome'], m: string | null) => StreamResult;
  },
  message: string,
  outcome: StreamResult['outcome'],
): StreamResult {
  const { res, tr } = end;
  const last = res.destroyed ? null : tr.error(message, outcome === 'shutting_down' ? 'shutting_down' : 'upstream_stream_error');
  if (last !== null && !res.destroyed) res.end(last);
  return end.result(outcome, message);
}
