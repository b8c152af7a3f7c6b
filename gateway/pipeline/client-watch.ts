// Watches the client of one call from the moment its handler starts (the body is read by then): a client that
// leaves while its key is checked or its call admitted is noticed at once, so no upstream call starts for it and
// its hold is released as soon as admission returns. One AbortSignal cancels the upstream call when the client
// goes, or when a shutdown ends the calls still in flight.
import type { ServerResponse } from 'node:http';

export interface ClientWatch {
  readonly signal: AbortSignal;
  /** True once the client closed the connection before the answer was complete. */
  gone(): boolean;
  dispose(): void;
}

const CLIENT_CLOSED = new Error('client closed the connection');

export function watchClient(res: ServerResponse, ending?: AbortSignal): ClientWatch {
  const ctrl = new AbortController();
  let gone = false;
  const onClose = (): void => {
    if (res.writableFinished) return;
    gone = true;
    ctrl.abort(CLIENT_CLOSED);
  };
  const onEnding = (): void => ctrl.abort(ending?.reason);
  res.on('close', onClose);
  // The socket may have closed before the handler ran (while the body was read): no 'close' will come then.
  if (res.destroyed || res.socket?.destroyed === true) onClose();
  if (ending?.aborted) onEnding();
  else ending?.addEventListener('abort', onEnding, { once: true });
  return {
    signal: ctrl.signal,
    gone: () => gone,
    dispose: () => {
      res.off('close', onClose);
      ending?.removeEventListener('abort', onEnding);
    },
  };
}
