// The consent page (pure HTML per flow state, everything escaped, strict headers) and the admin's start request
// (the same binding as the key's own calls, or the field that is wrong).
import { describe, expect, it } from 'vitest';
import type { VirtualKey } from '../../src/governance/model.ts';
import { bindingFor } from '../../src/mcp/binding.ts';
import { adminStart } from '../../src/mcp/oauth/per-user/admin.ts';
import { CONSENT_CSP, consentPage, escapeHtml, messagePage } from '../../src/mcp/oauth/per-user/consent-page.ts';
import { flowBinding, flowIdentity } from '../../src/mcp/oauth/per-user/index.ts';
import type { McpClientRecord } from '../../src/mcp/types.ts';
import { StateError } from '../../src/state/errors.ts';
import type { FlowRecord } from '../../src/state/services/oauth/per-user-flows.ts';
import { mcpClient, virtualKey } from './helpers.ts';

function flow(over: Partial<FlowRecord> = {}): FlowRecord {
  return {
    id: 'puf_aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa',
    oauth_config_id: 'cfg',
    mcp_client_id: 'c1',
    mcp_client_name: 'notes',
    flow_mode: 'vk',
    binding_id: 'vk1',
    virtual_key_id: 'vk1',
    virtual_key_name: 'tenant-a',
    status: 'pending',
    status_message: undefined,
    expires_at: '2030-01-01T00:00:00.000Z',
    created_at: '2030-01-01T00:00:00.000Z',
    has_active_token: false,
    ...over,
  };
}

const key = (id: string): VirtualKey => virtualKey({ id, name: `key-${id}` });

/** A per_user_oauth client binding per user. */
const client = (over: Partial<McpClientRecord> = {}): McpClientRecord =>
  mcpClient({ name: 'notes', auth_type: 'per_user_oauth', oauth_config_id: 'cfg', flow_mode: 'user', ...over });

describe('consent page', () => {
  it('a pending flow names the client and identity and links to its authorize step', () => {
    const p = consentPage(flow(), '/api/oauth/consent/puf_x/authorize');
    expect(p.status).toBe(200);
    expect(p.body).toContain('Authorize notes');
    expect(p.body).toContain('virtual key tenant-a');
    expect(p.body).toContain('href="/api/oauth/consent/puf_x/authorize"');
    expect(p.body).not.toContain('Already authenticated');
    expect(p.headers).toMatchObject({ 'cache-control': 'no-store', 'referrer-policy': 'no-referrer' });
    expect(p.headers['content-security-policy']).toBe(CONSENT_CSP);
    expect(CONSENT_CSP).toMatch(/^default-src 'none'; style-src 'sha256-[A-Za-z0-9+/=]+';/);
    expect(p.body).not.toMatch(/<script/i);
  });

  it('says "already authenticated" instead of prompting when the binding holds an active token', () => {
    const p = consentPage(flow({ has_active_token: true }), '/authorize');
    expect(p.body).toContain('Already authenticated');
    expect(p.body).not.toContain('id="authorize"');
  });

  it('shows authorized, failed (with why) and expired flows as such, without a sign-in link', () => {
    const authorized = consentPage(flow({ status: 'authorized' }), '/a');
    expect(authorized.body).toContain('data-state="authorized"');
    const failed = consentPage(flow({ status: 'failed', status_message: 'access_denied' }), '/a');
    expect(failed.body).toContain('data-state="failed"');
    expect(failed.body).toContain('access_denied');
    const expired = consentPage(flow({ status: 'expired' }), '/a');
    expect(expired.body).toContain('data-state="expired"');
    for (const p of [authorized, failed, expired]) expect(p.body).not.toContain('id="authorize"');
  });

  it('escapes every value it shows', () => {
    const evil = '<script>alert(1)</script>"\'`=&';
    const p = consentPage(
      flow({ flow_mode: 'user', user_name: evil, mcp_client_name: evil, status: 'failed', status_message: evil }),
      '/a',
    );
    expect(p.body).not.toContain('<script>');
    expect(p.body).toContain(escapeHtml('<script>'));
    expect(escapeHtml(evil)).not.toMatch(/[<>"'`=]/);
    expect(messagePage(404, 'x', evil).body).not.toContain('<script>');
  });
});

describe('flow bindings', () => {
  it('a flow stores and gives back exactly the binding of the call that opened it', () => {
    const c = client({ flow_mode: 'session' });
    const b = bindingFor(c, { kind: 'virtual_key', vk: key('vk1') }, { 'x-gateway-session-id': 's1' });
    if (!b) throw new Error('no binding');
    const identity = flowIdentity(b);
    expect(identity).toMatchObject({ flow_mode: 'session', binding_id: 'vk:vk1/s1', session_id: 's1' });
    const back = flowBinding(flow({ ...identity, virtual_key_id: 'vk1', virtual_key_name: 'key-vk1' }));
    expect(back).toMatchObject({ kind: 'session', id: 'vk:vk1/s1', session: 's1' });
    expect(flowIdentity({ kind: 'server' })).toBeUndefined();
  });
});

describe('adminStart', () => {
  const clients = new Map([
    ['c1', client()],
    ['plain', client({ id: 'plain', auth_type: 'none', flow_mode: null })],
  ]);
  const keys = new Map([['vk1', key('vk1')]]);

  it('binds like the key’s own call with the same headers', () => {
    const s = adminStart(
      { mcp_client_id: 'c1', virtual_key_id: 'vk1', user_id: 'bob', ttl_seconds: 60 },
      clients,
      keys,
    );
    const own = bindingFor(client(), { kind: 'virtual_key', vk: key('vk1') }, { 'x-gateway-user-id': 'bob' });
    expect(own).toMatchObject({ kind: 'user', id: 'vk:vk1/bob' });
    expect(s.binding).toMatchObject({ kind: 'user', id: 'vk:vk1/bob' });
    expect(s.ttlMs).toBe(60_000);
  });

  it.each([
    [{}, 'mcp_client_id'],
    [{ mcp_client_id: 'nope', virtual_key_id: 'vk1', user_id: 'b' }, 'mcp_client_id'],
    [{ mcp_client_id: 'plain', virtual_key_id: 'vk1' }, 'mcp_client_id'],
    [{ mcp_client_id: 'c1', virtual_key_id: 'nope', user_id: 'b' }, 'virtual_key_id'],
    [{ mcp_client_id: 'c1', virtual_key_id: 'vk1' }, 'user_id'],
    [{ mcp_client_id: 'c1', virtual_key_id: 'vk1', user_id: 'b', session_id: 's' }, 'session_id'],
    [{ mcp_client_id: 'c1', virtual_key_id: 'vk1', user_id: 'a\nb' }, 'user_id'],
    [{ mcp_client_id: 'c1', virtual_key_id: 'vk1', user_id: 'b', ttl_seconds: 0 }, 'ttl_seconds'],
    [{ mcp_client_id: 'c1', virtual_key_id: 'vk1', user_id: 'b', extra: 1 }, undefined],
  ])('refuses %j naming %s', (body, param) => {
    let err: unknown;
    try {
      adminStart(body, clients, keys);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(StateError);
    expect(err).toMatchObject({ code: 'invalid' });
    if (param) expect((err as StateError).param).toBe(param);
  });
});
