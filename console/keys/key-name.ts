// What a key's name may be, checked on the server before any lookup: a new key's name (the Create form, kept short so
// a rotation suffix fits), and the name an action (Revoke, Rotate) names, which may also be a manifest's ApiKey
// name (an RFC 1123 subdomain). Neither has a slash, so no name can reach another API path (e.g. `<name>/status`).
const LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const SUBDOMAIN = /^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/;

export const NEW_KEY_NAME_MAX = 50;

/** Why `name` cannot be a new key's name, or null when it can. */
export function newKeyNameError(name: string): string | null {
  if (name === '') return 'Enter a name.';
  if (name.length > NEW_KEY_NAME_MAX || !LABEL.test(name)) {
    return `Use at most ${NEW_KEY_NAME_MAX} lowercase letters, digits and hyphens, starting and ending with a letter or digit.`;
  }
  return null;
}

/** Whether `name` can name an existing key (one made in the console, or an ApiKey of the manifests). */
export function isKeyName(name: string): boolean {
  return name.length <= 253 && SUBDOMAIN.test(name);
}
