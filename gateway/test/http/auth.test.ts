import { describe, expect, it } from 'vitest';
import { AuthConfig } from '../../src/config/schema.ts';
import type { VirtualKey } from '../../src/governance/model.ts';
import { authenticateAdmin, authenticateInference, buildAuthIndex } from '../../src/http/auth.ts';
import { GatewayError } from '../../src/http/errors.ts';
import { sha256Hex } from '../../src/state/ids.ts';

const index = buildAuthIndex(
  AuthConfig.parse({
    inference_tokens: [{ name: 'ci', value: 'token-1234567890' }],
    basic_users: [{ username: 'alice', password: 'wonderland-1' }],
  }),
  'admin-key-1234567890',
);
const none = new Set<string>();
const NOW = Date.parse('2026-06-01T00:00:00Z');
const noVk = () => undefined;
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
    expect(authenticateInference({ authorization: 'Bearer token-1234567890' }, index, none, true, noVk, NOW)).toEqual({
      kind: 'token',
      name: 'ci',
    });
    expect(
      authenticateInference({ authorization: 'Bearer admin-key-1234567890' }, index, none, true, noVk, NOW).kind,
    ).toBe('admin');
    expect(
      authenticateInference({ authorization: basic('alice', 'wonderland-1') }, index, none, true, noVk, NOW),
    ).toEqual({
      kind: 'basic',
      username: 'alice',
    });
  });

  it('fails raw provider keys in every header, even with enforcement off', () => {
    for (const enforce of [true, false]) {
      fails(
        () => authenticateInference({ authorization: 'Bearer sk-proj-abc' }, index, none, enforce, noVk, NOW),
        /Raw provider keys/,
      );
      fails(
        () => authenticateInference({ 'x-api-key': 'sk-ant-abc' }, index, none, enforce, noVk, NOW),
        /Raw provider keys/,
      );
      fails(
        () => authenticateInference({ 'x-goog-api-key': 'AIza' }, index, none, enforce, noVk, NOW),
        /x-goog-api-key/,
      );
      fails(
        () => authenticateInference({ 'x-gateway-bedrock-access-key': 'AKIA' }, index, none, enforce, noVk, NOW),
        /bedrock/,
      );
      fails(
        () => authenticateInference({ 'x-gateway-azure-endpoint': 'https://x' }, index, none, enforce, noVk, NOW),
        /azure/,
      );
    }
  });

  it('rejects wrong Basic passwords and unknown users alike', () => {
    fails(
      () => authenticateInference({ authorization: basic('alice', 'nope') }, index, none, true, noVk, NOW),
      /invalid username/,
    );
    fails(
      () => authenticateInference({ authorization: basic('bob', 'wonderland-1') }, index, none, true, noVk, NOW),
      /invalid username/,
    );
  });

  it('requires credentials only when enforcement is on', () => {
    fails(() => authenticateInference({}, index, none, true, noVk, NOW), /missing credentials/);
    expect(authenticateInference({}, index, none, false, noVk, NOW)).toEqual({ kind: 'anonymous' });
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

describe('virtual keys on inference', () => {
  const vk = (over: Partial<VirtualKey> = {}): VirtualKey => ({
    id: 'vk1',
    name: 'tenant-a',
    is_active: true,
    expires_at_ms: null,
    calendar_aligned: false,
    rate_limit: null,
    allowed_extra_headers: [],
    mcp_configs: [],
    team_id: null,
    customer_id: null,
    provider_configs: [],
    budgets: [],
    ...over,
  });
  const value = 'sk-vk-tenant-a-0123456789abcdef';
  const lookup = (key: VirtualKey) => (h: string) => (h === sha256Hex(value) ? key : undefined);

  it('accepts the key as Bearer, x-api-key or x-gateway-vk', () => {
    for (const headers of [{ authorization: `Bearer ${value}` }, { 'x-api-key': value }, { 'x-gateway-vk': value }]) {
      const p = authenticateInference(headers, index, none, true, lookup(vk()), NOW);
      expect(p).toMatchObject({ kind: 'virtual_key', vk: { id: 'vk1' } });
    }
  });

  it('refuses unknown, inactive and expired keys with 403, as the reference gateway does', () => {
    const denied = (key: VirtualKey, sent = value) => {
      try {
        authenticateInference({ 'x-gateway-vk': sent }, index, none, true, lookup(key), NOW);
      } catch (err) {
        expect(err).toBeInstanceOf(GatewayError);
        return (err as GatewayError).status;
      }
      return 200;
    };
    expect(denied(vk(), 'sk-vk-nope-000000')).toBe(403);
    expect(denied(vk({ is_active: false }))).toBe(403);
    expect(denied(vk({ expires_at_ms: NOW - 1 }))).toBe(403);
    expect(denied(vk({ expires_at_ms: NOW + 60_000 }))).toBe(200);
  });

  it('still fails a raw provider key sent beside a virtual key', () => {
    fails(
      () =>
        authenticateInference(
          { 'x-gateway-vk': value, authorization: 'Bearer sk-proj-raw' },
          index,
          none,
          true,
          lookup(vk()),
          NOW,
        ),
      /Raw provider keys/,
    );
  });
});
