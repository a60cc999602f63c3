// Upstream error text is scrubbed of every key secret of the provider (API key values, Bedrock secret key and
// session token, Vertex service-account private key material) and cut to 4 KiB before a caller or the log sees it.
import { generateKeyPairSync } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { ProviderError } from '../../../src/providers/errors.ts';
import {
  boundText,
  keySecrets,
  MAX_ERROR_TEXT_CHARS,
  redactError,
  scrub,
  secretsOf,
} from '../../../src/providers/shared/redact.ts';
import type { ProviderKey } from '../../../src/providers/types.ts';

function key(over: Partial<ProviderKey>): ProviderKey {
  return { id: 'k', name: 'k', value: '', models: ['*'], weight: 1, aliases: {}, ...over };
}

const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 1024 });
const PEM = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
const SERVICE_ACCOUNT = JSON.stringify({
  type: 'service_account',
  client_email: 'sa@p.iam.gserviceaccount.com',
  private_key_id: 'abcdef0123456789abcdef',
  private_key: PEM,
});

describe('key secrets', () => {
  it('take out API key values, also URL- and JSON-encoded', () => {
    const secrets = keySecrets(key({ value: 'sk-live/abc+def"xyz' }));
    const text = 'bad key sk-live/abc+def"xyz, url sk-live%2Fabc%2Bdef%22xyz, json sk-live/abc+def\\"xyz';
    expect(scrub(text, secrets)).toBe('bad key [REDACTED], url [REDACTED], json [REDACTED]');
  });

  it('take out Bedrock access key, secret key and session token', () => {
    const k = key({
      bedrock_key_config: {
        access_key: 'AKIAEXAMPLE123456',
        secret_key: 'wJalrXUtnFEMI/K7MDENG',
        region: 'us-east-1',
        session_token: 'FwoGZXIvYXdzEJr//////////session',
      },
    });
    const text = 'AKIAEXAMPLE123456 / wJalrXUtnFEMI/K7MDENG / FwoGZXIvYXdzEJr//////////session';
    expect(scrub(text, keySecrets(k))).toBe('[REDACTED] / [REDACTED] / [REDACTED]');
  });

  it('take out Vertex private key material: the whole key, each of its lines, the key id', () => {
    const k = key({ vertex_key_config: { project_id: 'p', region: 'r', auth_credentials: SERVICE_ACCOUNT } });
    const line = PEM.split('\n')[3] ?? '';
    expect(line.length).toBeGreaterThan(40);
    const text = `echo: ${line} and ${JSON.stringify(PEM)} and abcdef0123456789abcdef`;
    const out = scrub(text, keySecrets(k));
    expect(out).not.toContain(line);
    expect(out).not.toContain('abcdef0123456789abcdef');
    expect(out).toContain('echo: [REDACTED] and ');
  });

  it('leave short placeholder values (local servers) alone', () => {
    expect(keySecrets(key({ value: 'ollama' }))).toEqual([]);
  });

  it('of a provider: every key', () => {
    const keys = [key({ value: 'first-secret-1' }), key({ id: 'k2', value: 'second-secret-2' })];
    expect(scrub('first-secret-1 second-secret-2', secretsOf(keys))).toBe('[REDACTED] [REDACTED]');
  });
});

describe('bounded error text', () => {
  it('cuts after scrubbing, so a secret at the cut never leaves a prefix', () => {
    const secret = 'S'.repeat(40);
    const text = `${'x'.repeat(MAX_ERROR_TEXT_CHARS - 10)}${secret}`;
    const out = boundText(text, [secret]);
    expect(out).not.toContain('SSSS');
    expect(out.length).toBeLessThanOrEqual(MAX_ERROR_TEXT_CHARS + 20);
  });

  it('replaces NUL, which the request log cannot store', () => {
    expect(boundText('a\u0000b', [])).toBe('a\ufffdb');
  });

  it('redacts message, type and code of a ProviderError and keeps the rest', () => {
    const err = new ProviderError('upstream', `invalid key sk-secret-value-1 ${'y'.repeat(10_000)}`, {
      status: 401,
      type: 'sk-secret-value-1',
      code: 'c'.repeat(1000),
      retryAfter: 3,
    });
    const out = redactError(err, ['sk-secret-value-1']);
    expect(out.message.startsWith('invalid key [REDACTED] yyy')).toBe(true);
    expect(out.message.length).toBeLessThan(MAX_ERROR_TEXT_CHARS + 20);
    expect(out.message.endsWith('(truncated)')).toBe(true);
    expect(out).toMatchObject({ kind: 'upstream', status: 401, type: '[REDACTED]', retryAfter: 3 });
    expect(out.code?.length).toBeLessThan(300);
    const clean = new ProviderError('network', 'upstream unreachable');
    expect(redactError(clean, ['sk-secret-value-1'])).toBe(clean);
  });
});
