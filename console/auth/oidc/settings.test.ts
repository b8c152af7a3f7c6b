import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { oidcSettingsFromEnv, sessionTtlFromEnv, tokenSignInFromEnv } from './settings.ts';

describe('OIDC settings', () => {
  it('are off without an issuer, and take the defaults of the API server otherwise', () => {
    expect(oidcSettingsFromEnv({})).toBeNull();
    const s = oidcSettingsFromEnv({ SVC_CONSOLE_OIDC_ISSUER: 'https://idp.example.com/realms/x', SVC_CONSOLE_OIDC_CLIENT_ID: 'console' });
    expect(s).toMatchObject({
      clientId: 'console',
      scopes: ['openid', 'profile', 'email'],
      usernameClaim: 'sub',
      groupsClaim: 'groups',
      usernamePrefix: '',
      groupsPrefix: '',
    });
    expect(s?.clientSecret).toBeUndefined();
  });

  it('read the client secret from its file, and always ask for openid', () => {
    const dir = mkdtempSync(join(tmpdir(), 'svc-oidc-settings-'));
    writeFileSync(join(dir, 's'), 'the-secret\n');
    const s = oidcSettingsFromEnv({
      SVC_CONSOLE_OIDC_ISSUER: 'https://idp.example.com',
      SVC_CONSOLE_OIDC_CLIENT_ID: 'c',
      SVC_CONSOLE_OIDC_CLIENT_SECRET_FILE: join(dir, 's'),
      SVC_CONSOLE_OIDC_SCOPES: 'email,groups',
    });
    expect(s?.clientSecret).toBe('the-secret');
    expect(s?.scopes).toEqual(['openid', 'email', 'groups']);
    writeFileSync(join(dir, 'empty'), '\n');
    expect(() =>
      oidcSettingsFromEnv({
        SVC_CONSOLE_OIDC_ISSUER: 'https://i.example',
        SVC_CONSOLE_OIDC_CLIENT_ID: 'c',
        SVC_CONSOLE_OIDC_CLIENT_SECRET_FILE: join(dir, 'empty'),
      }),
    ).toThrow(/is empty/);
    expect(() =>
      oidcSettingsFromEnv({
        SVC_CONSOLE_OIDC_ISSUER: 'https://i.example',
        SVC_CONSOLE_OIDC_CLIENT_ID: 'c',
        SVC_CONSOLE_OIDC_CLIENT_SECRET_FILE: join(dir, 'none'),
      }),
    ).toThrow(/cannot read/);
  });

  it('refuse plain http except on this machine, and an issuer without a client id', () => {
    expect(() => oidcSettingsFromEnv({ SVC_CONSOLE_OIDC_ISSUER: 'http://idp.example.com', SVC_CONSOLE_OIDC_CLIENT_ID: 'c' })).toThrow(/https/);
    expect(oidcSettingsFromEnv({ SVC_CONSOLE_OIDC_ISSUER: 'http://127.0.0.1:5556', SVC_CONSOLE_OIDC_CLIENT_ID: 'c' })).not.toBeNull();
    expect(() => oidcSettingsFromEnv({ SVC_CONSOLE_OIDC_ISSUER: 'https://idp.example.com' })).toThrow(/SVC_CONSOLE_OIDC_CLIENT_ID/);
  });

  it('turn the token field off only when asked, and bound sessions in hours', () => {
    expect(tokenSignInFromEnv({})).toBe(true);
    expect(tokenSignInFromEnv({ SVC_CONSOLE_TOKEN_SIGN_IN: '0', SVC_CONSOLE_OIDC_ISSUER: 'https://idp.example.com' })).toBe(false);
    expect(() => tokenSignInFromEnv({ SVC_CONSOLE_TOKEN_SIGN_IN: '0' })).toThrow(/nobody can sign in/);
    expect(() => tokenSignInFromEnv({ SVC_CONSOLE_TOKEN_SIGN_IN: 'no' })).toThrow(/1 or 0/);
    expect(sessionTtlFromEnv({})).toBe(8 * 3600_000);
    expect(sessionTtlFromEnv({ SVC_CONSOLE_SESSION_HOURS: '0.5' })).toBe(1800_000);
    expect(() => sessionTtlFromEnv({ SVC_CONSOLE_SESSION_HOURS: '0' })).toThrow(/above 0/);
  });
});
