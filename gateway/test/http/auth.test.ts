import { describe, expect, it } from 'vitest';
import { AuthConfig } from '../../src/config/schema.ts';
import { authenticateAdmin, authenticateInference, buildAuthIndex } from '../../src/http/auth.ts';
import { GatewayError } from '../../src/http/errors.ts';

const index = buildAuthIndex(
  AuthConfig.parse({
    inference_tokens: [{ name: 'ci', value: 'token-1234567890' }],
    basic_users: [{ username: 'alice', password: 'wonderland-1' }],
  }),
  'admin-key-1234567890',
);
const none = new Set<string>();
const basic = (u: string, p: string) => `Basic ${Buffer.from(`${u}:${p}`).toString('base64')}`;

function fails(fn: () => unknown, message: RegExp): void {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(GatewayError);
    expect((err as GatewayError).status).toBe(401);
    expect((err as GatewayError).message).toMatch(message);
    return;
  }
  throw new Error('expected an authentication failure');
}

describe('inference authentication', () => {
  it('accepts gateway tokens, the admin key and Basic users', () => {
    expect(authenticateInference({ authorization: 'Bearer token-1234567890' }, index, none, true)).toEqual({
      kind: 'token',
      name: 'ci',
    });
    expect(authenticateInference({ authorization: 'Bearer admin-key-1234567890' }, index, none, true).kind).toBe(
      'admin',
    );
    expect(authenticateInference({ authorization: basic('alice', 'wonderland-1') }, index, none, true)).toEqual({
      kind: 'basic',
      username: 'alice',
    });
  });

  it('fails raw provider keys in every header, even with enforcement off', () => {
    for (const enforce of [true, false]) {
      fails(
        () => authenticateInference({ authorization: 'Bearer sk-proj-abc' }, index, none, enforce),
        /Raw provider keys/,
      );
      fails(() => authenticateInference({ 'x-api-key': 'sk-ant-abc' }, index, none, enforce), /Raw provider keys/);
      fails(() => authenticateInference({ 'x-goog-api-key': 'AIza' }, index, none, enforce), /x-goog-api-key/);
      fails(() => authenticateInference({ 'x-gateway-bedrock-access-key': 'AKIA' }, index, none, enforce), /bedrock/);
      fails(() => authenticateInference({ 'x-gateway-azure-endpoint': 'https://x' }, index, none, enforce), /azure/);
    }
  });

  it('rejects wrong Basic passwords and unknown users alike', () => {
    fails(
      () => authenticateInference({ authorization: basic('alice', 'nope') }, index, none, true),
      /invalid username/,
    );
    fails(
      () => authenticateInference({ authorization: basic('bob', 'wonderland-1') }, index, none, true),
      /invalid username/,
    );
  });

  it('requires credentials only when enforcement is on', () => {
    fails(() => authenticateInference({}, index, none, true), /missing credentials/);
    expect(authenticateInference({}, index, none, false)).toEqual({ kind: 'anonymous' });
  });
});

describe('management authentication', () => {
  it('accepts only Bearer admin keys, including stored (hashed) ones', () => {
    expect(authenticateAdmin({ authorization: 'Bearer admin-key-1234567890' }, index, none).kind).toBe('admin');
    const stored = new Set(['5b8b1a76fe0a0c6fb7f1b9da4e6f4f2bd8a3c5cf4b0f2fb1cbe1f0c5a1e0e0a1']);
    fails(() => authenticateAdmin({ authorization: 'Bearer token-1234567890' }, index, stored), /invalid admin/);
    fails(() => authenticateAdmin({ 'x-api-key': 'admin-key-1234567890' }, index, none), /x-api-key/);
    fails(() => authenticateAdmin({ authorization: 'Bearer sk-vk-abc' }, index, none), /virtual keys/);
  });
});
