// Watches the client of one call from the moment its handler starts (the body is read by then): a client that
// leaves while its key is checked or its call admitted is noticed at once, so no upstream call starts for it and
// its hold is released as soon as admission returns. Its signal aborts when the client goes.
import type { ServerResponse } from 'node:http';

export interface ClientWatch {
  /** Aborted once the client closed the connection before the answer was complete. */
  readonly signal: AbortSignal;
  dispose(): void;
}

const CLIENT_CLOSED = new Error('client closed the connection');

export function watchClient(res: ServerResponse): ClientWatch {
  const ctrl = new AbortController();
  const onClose = (): void => {
    if (!res.writableFinished) ctrl.abort(CLIENT_CLOSED);
  };
  res.on('close', onClose);
  // The socket may have closed before the handler ran (while the body was read): no 'close' will come then.
  if (res.destroyed || res.socket?.destroyed === true) onClose();
  return { signal: ctrl.signal, dispose: () => res.off('close', onClose) };
}
