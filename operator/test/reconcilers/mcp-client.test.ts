// MCPClient: the spec -> the MCP client service's create/update body (Secrets read, defaults filled), the
// gateway's report -> the Ready condition and status fields, and who is reconciled again when one changes.
import { StateError } from '@model-gateway/gateway/state';
import { describe, expect, it } from 'vitest';
import { MCPClientSpec } from '../../src/crds/mcp-client.ts';
import { asInputError } from '../../src/mcp-oauth.ts';
import { dependents } from '../../src/reconcilers/dependents.ts';
import {
  MCP_ERROR_REQUEUE_MS,
  MCP_PENDING_REQUEUE_MS,
  type McpClientStatus,
  mcpClientBody,
  mcpClientNameOf,
  mcpStatusOutcome,
} from '../../src/reconcilers/mcp-client.ts';
import { fromStateError, USAGE_REFRESH_MS } from '../../src/reconcilers/outcome.ts';
import type { Resource } from '../../src/reconcilers/types.ts';
import { caches, resource, secret } from './fixtures.ts';

const URL = 'https://tools.example.com/mcp';

function spec(raw: Record<string, unknown>): MCPClientSpec {
  return MCPClientSpec.parse({ connectionType: 'http', connectionString: URL, ...raw });
}

function body(name: string, raw: Record<string, unknown>, secrets = caches({})) {
  const s = spec(raw);
  return mcpClientBody(resource(name, s), s, secrets);
}

describe('MCPClient body', () => {
  it('a headers client: every key of the Secret is a header; ceilings default to all, like the API', () => {
    const c = caches({ secrets: [secret('gh-headers', { 'x-api-key': 'k-123', Authorization: 'Bearer t' })] });
    expect(
      body('github-tools', { authType: 'headers', headersFrom: { secretRef: { name: 'gh-headers' } } }, c),
    ).toEqual({
      ok: true,
      body: {
        name: 'github_tools',
        connection_type: 'http',
        connection_string: URL,
        auth_type: 'headers',
        headers: { Authorization: 'Bearer t', 'x-api-key': 'k-123' },
        tools_to_execute: ['*'],
        tools_to_auto_execute: ['*'],
        tool_pricing: {},
        is_ping_available: true,
        disabled: false,
      },
    });
  });

  it('maps every optional field; an auth type none carries neither headers nor oauth_config', () => {
    const r = body('search', {
      connectionType: 'sse',
      authType: 'none',
      clientName: 'Search_1',
      toolsToExecute: ['find', 'read'],
      toolsToAutoExecute: [],
      toolPricing: { find: 0.01 },
      isPingAvailable: false,
      disabled: true,
    });
    expect(r).toEqual({
      ok: true,
      body: {
        name: 'Search_1',
        connection_type: 'sse',
        connection_string: URL,
        auth_type: 'none',
        tools_to_execute: ['find', 'read'],
        tools_to_auto_execute: [],
        tool_pricing: { find: 0.01 },
        is_ping_available: false,
        disabled: true,
      },
    });
  });

  it('oauth: the client secret comes from its Secret; unset settings are left out for discovery', () => {
    const c = caches({ secrets: [secret('oauth-creds', { secret: 's3cr3t' })] });
    const r = body(
      'crm',
      {
        authType: 'oauth',
        oauth: {
          clientId: 'gateway',
          clientSecretRef: { name: 'oauth-creds', key: 'secret' },
          serverUrl: 'https://auth.example.com',
          scopes: ['read', 'write'],
        },
      },
      c,
    );
    expect(r.ok && r.body.oauth_config).toEqual({
      client_id: 'gateway',
      client_secret: 's3cr3t',
      server_url: 'https://auth.example.com',
      scopes: ['read', 'write'],
    });
    expect(r.ok && 'headers' in r.body).toBe(false);
  });

  it('per-user OAuth: flow_mode defaults to vk; an oauth client without an oauth block still gets a config', () => {
    expect(body('mail', { authType: 'per_user_oauth', oauth: { flowMode: 'user' } })).toMatchObject({
      ok: true,
      body: { auth_type: 'per_user_oauth', oauth_config: { flow_mode: 'user' } },
    });
    expect(body('mail', { authType: 'per_user_oauth' })).toMatchObject({
      ok: true,
      body: { oauth_config: { flow_mode: 'vk' } },
    });
    expect(body('crm', { authType: 'oauth' })).toMatchObject({ ok: true, body: { oauth_config: {} } });
  });

  it('a missing or empty headers Secret, or a missing client secret key, is SecretNotFound without any value', () => {
    const headers = { authType: 'headers', headersFrom: { secretRef: { name: 'h' } } };
    expect(body('t', headers)).toEqual({
      ok: false,
      outcome: { ready: false, reason: 'SecretNotFound', message: 'Secret h not found' },
    });
    expect(body('t', headers, caches({ secrets: [secret('h', {})] }))).toMatchObject({
      ok: false,
      outcome: { reason: 'SecretNotFound', message: 'Secret h has no keys; each key is a header to send' },
    });
    const oauth = { authType: 'oauth', oauth: { clientSecretRef: { name: 'o', key: 'secret' } } };
    expect(body('t', oauth, caches({ secrets: [secret('o', { other: 'v' })] }))).toMatchObject({
      ok: false,
      outcome: { reason: 'SecretNotFound', message: 'Secret o has no key secret' },
    });
  });

  it('client names: the resource name with - and . as _, or spec.clientName; a name that does not fit is InvalidSpec', () => {
    expect(mcpClientNameOf(resource('a-b.c', {}), {})).toBe('a_b_c');
    expect(mcpClientNameOf(resource('a-b', {}), { clientName: 'Other' })).toBe('Other');
    const long = 'x'.repeat(33);
    expect(mcpClientNameOf(resource(long, {}), {})).toBeUndefined();
    expect(body(long, { authType: 'none' })).toMatchObject({
      ok: false,
      outcome: { reason: 'InvalidSpec', message: expect.stringContaining('set spec.clientName') },
    });
    expect(body(long, { authType: 'none', clientName: 'short' })).toMatchObject({ ok: true, body: { name: 'short' } });
  });

  it('the schema refuses a clientName the gateway would refuse, and a URL with spaces', () => {
    expect(
      MCPClientSpec.safeParse({ connectionType: 'http', connectionString: URL, authType: 'none', clientName: 'a-b' })
        .success,
    ).toBe(false);
    expect(
      MCPClientSpec.safeParse({ connectionType: 'http', connectionString: 'http://a b', authType: 'none' }).success,
    ).toBe(false);
  });
});

describe('MCPClient status', () => {
  const id = 'client-id';
  const http = (authType: MCPClientSpec['authType'], disabled?: boolean) => ({
    authType,
    connectionString: URL,
    ...(disabled !== undefined ? { disabled } : {}),
  });
  const view = (v: Partial<McpClientStatus>): McpClientStatus => ({ state: 'disconnected', state_message: null, ...v });

  it('connected is Ready, refreshed periodically so the status follows the connection', () => {
    expect(mcpStatusOutcome(id, 'gh', http('headers'), view({ state: 'connected' }))).toEqual({
      ready: true,
      fields: { clientId: id, clientName: 'gh', connectionState: 'connected' },
      requeueAfterMs: USAGE_REFRESH_MS,
    });
  });

  it('disconnected is Connecting, error is ConnectionError with the pod message; both requeued', () => {
    expect(mcpStatusOutcome(id, 'gh', http('none'), view({}))).toMatchObject({
      ready: false,
      reason: 'Connecting',
      message: `waiting for a gateway pod to connect to ${URL}`,
      requeueAfterMs: MCP_PENDING_REQUEUE_MS,
      fields: { connectionState: 'disconnected' },
    });
    expect(
      mcpStatusOutcome(id, 'gh', http('none'), view({ state: 'error', state_message: 'HTTP 401 from the server' })),
    ).toMatchObject({
      ready: false,
      reason: 'ConnectionError',
      message: `cannot connect to ${URL}: HTTP 401 from the server`,
      requeueAfterMs: MCP_ERROR_REQUEUE_MS,
      fields: { connectionState: 'error' },
    });
  });

  it('server-level OAuth pending: AuthorizationPending with the authorize URL, or a note on who builds it', () => {
    const url = 'https://auth.example.com/authorize?client_id=gw&state=abc';
    const pending = mcpStatusOutcome(
      id,
      'crm',
      http('oauth'),
      view({ oauth: { status: 'pending', authorize_url: url } }),
    );
    expect(pending).toEqual({
      ready: false,
      reason: 'AuthorizationPending',
      message: 'an admin must authorize the gateway: open status.authorizeUrl',
      requeueAfterMs: MCP_PENDING_REQUEUE_MS,
      fields: {
        clientId: id,
        clientName: 'crm',
        connectionState: 'disconnected',
        oauthStatus: 'pending',
        authorizeUrl: url,
      },
    });
    const noUrl = mcpStatusOutcome(id, 'crm', http('oauth'), view({ oauth: { status: 'pending' } }));
    expect(noUrl).toMatchObject({ reason: 'AuthorizationPending', fields: { oauthStatus: 'pending' } });
    expect(!noUrl.ready && noUrl.message).toContain('mcp_external_client_url');
    expect(noUrl.fields).not.toHaveProperty('authorizeUrl');
  });

  it('failed, revoked and authorized-then-connected', () => {
    expect(
      mcpStatusOutcome(id, 'crm', http('oauth'), view({ oauth: { status: 'failed', message: 'access_denied' } })),
    ).toMatchObject({ reason: 'AuthorizationFailed', message: 'the authorization failed: access_denied' });
    expect(mcpStatusOutcome(id, 'crm', http('oauth'), view({ oauth: { status: 'revoked' } }))).toMatchObject({
      reason: 'Revoked',
      fields: { oauthStatus: 'revoked' },
    });
    expect(
      mcpStatusOutcome(id, 'crm', http('oauth'), view({ state: 'connected', oauth: { status: 'authorized' } })),
    ).toMatchObject({ ready: true, fields: { connectionState: 'connected', oauthStatus: 'authorized' } });
  });

  it('per-user OAuth and disabled clients do not wait for a pod-wide connection', () => {
    expect(
      mcpStatusOutcome(
        id,
        'mail',
        http('per_user_oauth'),
        view({ oauth: { status: 'pending', authorize_url: 'https://x' } }),
      ),
    ).toMatchObject({ ready: true, fields: { oauthStatus: 'pending' } });
    expect(
      mcpStatusOutcome(id, 'mail', http('per_user_oauth'), view({ state: 'error', state_message: 'down' })),
    ).toMatchObject({ reason: 'ConnectionError' });
    expect(mcpStatusOutcome(id, 'gh', http('headers', true), view({}))).toMatchObject({
      ready: true,
      fields: { connectionState: 'disconnected' },
    });
  });
});

describe('MCPClient dependents and errors', () => {
  const tools = resource('github-tools', {
    connectionType: 'http',
    connectionString: URL,
    authType: 'headers',
    headersFrom: { secretRef: { name: 'gh-headers' } },
  });
  const crm = resource('crm', {
    connectionType: 'http',
    connectionString: URL,
    authType: 'oauth',
    clientName: 'crm_prod',
    oauth: { clientSecretRef: { name: 'crm-oauth', key: 'secret' } },
  });
  const vk = (name: string, clients: string[]): Resource =>
    resource(name, { mcpConfigs: clients.map((mcpClientName) => ({ mcpClientName, toolsToExecute: ['*'] })) });

  it('an MCPClient wakes the VirtualKeys naming its gateway name', () => {
    const c = caches({
      mcpClients: [tools, crm],
      virtualKeys: [vk('a', ['github_tools']), vk('b', ['crm_prod', 'github_tools']), vk('c', ['crm'])],
    });
    expect(dependents('MCPClient', tools, c).map((d) => `${d.kind}/${d.obj.metadata.name}`)).toEqual([
      'VirtualKey/a',
      'VirtualKey/b',
    ]);
    expect(dependents('MCPClient', crm, c).map((d) => d.obj.metadata.name)).toEqual(['b']);
  });

  it('a headers Secret or an OAuth client secret wakes its MCPClient', () => {
    const c = caches({ mcpClients: [tools, crm] });
    expect(dependents('Secret', resource('gh-headers', {}), c).map((d) => `${d.kind}/${d.obj.metadata.name}`)).toEqual([
      'MCPClient/github-tools',
    ]);
    expect(dependents('Secret', resource('crm-oauth', {}), c).map((d) => d.obj.metadata.name)).toEqual(['crm']);
  });

  it('a VirtualKey naming an MCP client that does not exist yet is ReferenceNotFound, not InvalidSpec', () => {
    const param = 'mcp_configs[0].mcp_client_name';
    expect(
      fromStateError(new StateError('invalid', `${param}: there is no MCP client named "x"`, param)),
    ).toMatchObject({ reason: 'ReferenceNotFound', message: `${param}: there is no MCP client named "x"` });
    expect(
      fromStateError(
        new StateError('invalid', 'mcp_configs[0].tools_to_execute: bad', 'mcp_configs[0].tools_to_execute'),
      ),
    ).toMatchObject({
      reason: 'InvalidSpec',
    });
  });
});

describe('MCPClient OAuth writes in the operator', () => {
  it('an endpoint refused with a param becomes an invalid-input state error (InvalidSpec); anything else is rethrown', async () => {
    const refused = Object.assign(new Error('oauth_config.server_url: 10.0.0.1 is a private address'), {
      param: 'oauth_config.server_url',
    });
    const err = await asInputError(() => Promise.reject(refused)).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(StateError);
    expect(fromStateError(err)).toMatchObject({
      reason: 'InvalidSpec',
      message: 'oauth_config.server_url: 10.0.0.1 is a private address',
    });
    const down = new Error('connection refused');
    expect(await asInputError(() => Promise.reject(down)).catch((e: unknown) => e)).toBe(down);
    expect(await asInputError(async () => 'oac_1')).toBe('oac_1');
  });
});
