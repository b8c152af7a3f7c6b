// The one signal that ends a call: its client left, or a shutdown ends the calls still in flight.

export interface CallSignal {
  readonly signal: AbortSignal;
  /** True once the client left (not the shutdown). */
  clientGone(): boolean;
  dispose(): void;
}

export function callSignal(client: AbortSignal, ending: AbortSignal | undefined): CallSignal {
  if (!ending) return { signal: client, clientGone: () => client.aborted, dispose: () => {} };
  const ctrl = new AbortController();
  const onClient = (): void => ctrl.abort(client.reason);
  const onEnding = (): void => ctrl.abort(ending.reason);
  if (client.aborted) onClient();
  else client.addEventListener('abort', onClient, { once: true });
  if (ending.aborted) onEnding();
  else ending.addEventListener('abort', onEnding, { once: true });
  return {
    signal: ctrl.signal,
    clientGone: () => client.aborted,
    dispose: () => {
      client.removeEventListener('abort', onClient);
      ending.removeEventListener('abort', onEnding);
    },
  };
}
