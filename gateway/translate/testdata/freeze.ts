// Deep-freezes a client body, so a translator that mutated it would throw (strict mode) instead of passing.
export function deepFreeze<T>(v: T): T {
  if (v !== null && typeof v === 'object') {
    for (const x of Object.values(v)) deepFreeze(x);
    Object.freeze(v);
  }
  return v;
}
