// Whose token a per-user OAuth tool call uses (mcp/binding.ts): identities sent in headers are scoped to the
// credential that authenticated the call, so one tenant can never name another's token.
import { describe, expect, it } from 'vitest';
import type { VirtualKey } from '../../src/governance/model.ts';
import type { Principal } from '../../src/http/auth.ts';
import { bindingFor, originOf, resolveBinding } from '../../src/mcp/binding.ts';
import type { McpClientRecord } from '../../src/mcp/types.ts';
import { mcpClient, virtualKey } from './helpers.ts';

const vk = (id: string, name = `key-${id}`): VirtualKey => virtualKey({ id, name });

/** A per_user_oauth client binding to the calling virtual key. */
const client = (over: Partial<McpClientRecord> = {}): McpClientRecord =>
  mcpClient({ name: 'notes', auth_type: 'per_user_oauth', oauth_config_id: 'cfg1', flow_mode: 'vk', ...over });

const A: Principal = { kind: 'virtual_key', vk: vk('vk-a', 'tenant-a') };
const B: Principal = { kind: 'virtual_key', vk: vk('vk-b', 'tenant-b') };
const BASIC: Principal = { kind: 'basic', username: 'alice' };
const TOKEN: Principal = { kind: 'token', name: 'ci' };
const ANON: Principal = { kind: 'anonymous' };

describe('bindingFor', () => {
  it('uses the server-level token for every auth type but per_user_oauth', () => {
    for (const auth_type of ['none', 'headers', 'oauth'] as const) {
      expect(bindingFor(client({ auth_type, flow_mode: null }), ANON, {})).toEqual({ kind: 'server' });
    }
  });

  it('vk mode binds to the calling virtual key and refuses other callers with the reason', () => {
    expect(bindingFor(client(), A, {})).toMatchObject({ kind: 'vk', id: 'vk-a', name: 'tenant-a' });
    for (const p of [BASIC, TOKEN, ANON, { kind: 'admin', name: 'x' } as const]) {
      const r = resolveBinding(client(), p, {});
      expect(r.ok).toBe(false);
      if (!r.ok) expect(r.reason).toMatch(/virtual key/);
      expect(bindingFor(client(), p, {})).toBeUndefined();
    }
  });

  it('user mode scopes x-gateway-user-id to the calling credential: two tenants, same user id, two bindings', () => {
    const c = client({ flow_mode: 'user' });
    const a = bindingFor(c, A, { 'x-gateway-user-id': 'bob' });
    const b = bindingFor(c, B, { 'x-gateway-user-id': 'bob' });
    expect(a).toMatchObject({
      kind: 'user',
      id: 'vk:vk-a/bob',
      name: 'bob',
      scopeVk: { id: 'vk-a', name: 'tenant-a' },
    });
    expect(b).toMatchObject({ kind: 'user', id: 'vk:vk-b/bob' });
    expect(bindingFor(c, TOKEN, { 'x-gateway-user-id': 'bob' })).toMatchObject({ id: 'token:ci/bob' });
  });

  it('user mode: a Basic user is the user; a virtual key without the header has no user', () => {
    const c = client({ flow_mode: 'user' });
    expect(bindingFor(c, BASIC, {})).toMatchObject({ kind: 'user', id: 'basic:alice', name: 'alice' });
    const r = resolveBinding(c, A, {});
    expect(r).toEqual({ ok: false, reason: expect.stringContaining('send x-gateway-user-id') });
    expect(resolveBinding(c, ANON, { 'x-gateway-user-id': 'bob' }).ok).toBe(false);
  });

  it('session mode scopes x-gateway-session-id the same way and needs the header', () => {
    const c = client({ flow_mode: 'session' });
    expect(bindingFor(c, A, { 'x-gateway-session-id': 's1' })).toMatchObject({
      kind: 'session',
      id: 'vk:vk-a/s1',
      session: 's1',
      scopeVk: { id: 'vk-a' },
    });
    expect(bindingFor(c, B, { 'x-gateway-session-id': 's1' })).toMatchObject({ id: 'vk:vk-b/s1' });
    expect(resolveBinding(c, A, {})).toEqual({ ok: false, reason: expect.stringContaining('x-gateway-session-id') });
    expect(resolveBinding(c, ANON, { 'x-gateway-session-id': 's1' }).ok).toBe(false);
  });

  it('refuses empty, over-long or control-character identities with the reason', () => {
    const c = client({ flow_mode: 'user' });
    for (const bad of ['', '   ', 'x'.repeat(257), 'a\nb', 'a\u0000b']) {
      const r = resolveBinding(c, A, { 'x-gateway-user-id': bad });
      expect(r.ok, JSON.stringify(bad)).toBe(false);
      if (!r.ok) expect(r.reason).toMatch(/x-gateway-user-id: /);
    }
  });

  it('carries the calling origin for the consent link (scheme from the request when given)', () => {
    expect(bindingFor(client(), A, { host: 'gw.example:8080' })).toMatchObject({ origin: 'http://gw.example:8080' });
    expect(bindingFor(client(), A, { headers: { host: 'gw.example' }, protocol: 'https' })).toMatchObject({
      origin: 'https://gw.example',
    });
    expect(originOf({ headers: { host: 'evil.example/"><script>' } })).toBeUndefined();
    expect(originOf({ headers: {} })).toBeUndefined();
  });
});
