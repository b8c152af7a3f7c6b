// Preloaded into the peer (node --import): Portkey's gateway 1.15 appends its x-portkey-* headers to the
// upstream's fetch Response, whose headers are immutable on Node 24, so every stream fails with
// "TypeError: immutable" (Portkey-AI/gateway issues 1389 and 1550). The fix proposed upstream (PR 1551) copies
// the response into a new Response; this does the same at fetch, the least that makes its streams work.
const fetchImpl = globalThis.fetch;
globalThis.fetch = async (...args: Parameters<typeof fetch>): Promise<Response> => {
  const r = await fetchImpl(...args);
  return new Response(r.body, { status: r.status, statusText: r.statusText, headers: new Headers(r.headers) });
};
