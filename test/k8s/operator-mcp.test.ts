// The operator end to end for MCPClient: kubectl apply of an MCPClient (headers from a Secret) reaches a gateway
// process through the operator; the gateway connects to an MCP SDK tool server and the status says so; a Secret
// change reaches the upstream; a VirtualKey naming a client that does not exist yet waits for it; a client the API
// created is never taken over; deleting the resource deletes the row; a server-level OAuth client shows its
// pending authorization and the URL to open.
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mcpClientAt, type OAuthUpstream, startOAuthUpstream } from '../e2e/mcp-helpers.ts';
import { echoTool, type McpToolServer, startMcpToolServer } from '../fakes/mcp-servers.ts';
import { authorizeInBrowserless } from '../fakes/oauth-server.ts';
import { type GatewayProcess, startGatewayProcess } from '../harness/gateway-process.ts';
import type { ToolResult } from '../harness/kube-tools.ts';
import {
  ADMIN_KEY,
  API_VERSION,
  ENCRYPTION_SECRET,
  meta,
  NAMESPACE,
  type OperatorCluster,
  type ReadyCondition,
  startOperatorCluster,
} from '../harness/operator-cluster.ts';
import { waitFor } from '../harness/wait.ts';

const API = API_VERSION;
/** The public base URL the gateway builds OAuth redirect and authorize URLs from (not where it listens). */
const EXTERNAL_URL = 'https://gateway.example.com';
const VK_VALUE = 'sk-vk-mcp-e2e-0123456789abcdefghijkl';

let c: OperatorCluster;
let gw: GatewayProcess;
let tools: McpToolServer;
/** The x-api-key values the tool server accepts (the test widens it before rotating the Secret). */
const accepted = new Set(['key-one']);

beforeAll(async () => {
  // The operator checks MCPClient OAuth endpoints against the same allow-list as the gateways.
  c = await startOperatorCluster({
    operators: 1,
    gateways: 0,
    operatorEnv: { OPERATOR_MCP_ALLOWED_PRIVATE_NETWORKS: '127.0.0.0/8' },
  });
  tools = await startMcpToolServer({
    transport: 'http',
    tools: [echoTool('search'), echoTool('fetch')],
    authorize: (req) => accepted.has(String(req.headers['x-api-key'] ?? '')),
  });
  // A gateway with the cluster's encryption key (the operator created it) and a config.json that admits the
  // loopback tool servers through the SSRF guard and sets the public URL for OAuth.
  const key = await c.kubectl(
    'get',
    'secret',
    ENCRYPTION_SECRET,
    '-n',
    NAMESPACE,
    '-o',
    'jsonpath={.data.encryption-key}',
  );
  const configPath = join(c.cp.dir, 'gateway-mcp.json');
  await writeFile(
    configPath,
    JSON.stringify({
      client: { mcp_external_client_url: EXTERNAL_URL },
      mcp: { allowed_private_networks: ['127.0.0.0/8'] },
    }),
  );
  gw = await startGatewayProcess({
    DATABASE_URL: c.postgres.url,
    REDIS_URL: c.redis.url,
    GATEWAY_ENCRYPTION_KEY: Buffer.from(key.stdout, 'base64').toString('utf8'),
    GATEWAY_ADMIN_API_KEY: ADMIN_KEY,
    GATEWAY_CONFIG: configPath,
  });
}, 180_000);

afterAll(async () => {
  await gw?.stop();
  await tools?.close();
  await c?.stop();
});

function ok(r: ToolResult): string {
  expect(r.code, r.stderr).toBe(0);
  return r.stdout;
}

type Status = { conditions?: (ReadyCondition & { type: string })[]; [field: string]: unknown };

async function statusOf(kind: string, name: string): Promise<Status | undefined> {
  const r = await c.kubectl('get', kind, name, '-n', NAMESPACE, '-o', 'json');
  return r.code === 0 ? (JSON.parse(r.stdout) as { status?: Status }).status : undefined;
}

/** Waits until the Ready condition matches `want` (and the status fields match `fields`); returns the status. */
async function until(
  kind: string,
  name: string,
  want: Partial<ReadyCondition>,
  fields: Record<string, unknown> = {},
  timeoutMs = 20_000,
): Promise<Status> {
  let last: Status | undefined;
  await waitFor(
    async () => {
      last = await statusOf(kind, name);
      const ready = last?.conditions?.find((x) => x.type === 'Ready');
      return (
        ready !== undefined &&
        Object.entries(want).every(([k, v]) => ready[k as keyof ReadyCondition] === v) &&
        Object.entries(fields).every(([k, v]) => last?.[k] === v)
      );
    },
    timeoutMs,
    `${kind} ${name} to be ${JSON.stringify({ ...want, ...fields })} (last: ${JSON.stringify(last)})`,
  );
  return last as Status; // set by the condition above
}

/** A read of the database the gateways and the operator share. */
async function queryDb(sql: string, params: unknown[]): Promise<{ rows: Record<string, unknown>[] }> {
  const client = new pg.Client({ connectionString: c.postgres.url });
  await client.connect();
  try {
    return await client.query(sql, params);
  } finally {
    await client.end();
  }
}

async function admin(path: string, init: { method?: string; body?: unknown } = {}): Promise<Response> {
  return fetch(`${gw.url}${path}`, {
    method: init.method ?? 'GET',
    headers: { authorization: `Bearer ${ADMIN_KEY}`, 'content-type': 'application/json' },
    ...(init.body !== undefined ? { body: JSON.stringify(init.body) } : {}),
  });
}

const secret = (name: string, data: Record<string, string>) => ({
  apiVersion: 'v1',
  kind: 'Secret',
  metadata: meta(name),
  stringData: data,
});

/** An MCPClient resource over streamable HTTP to `url` with this auth type and the rest of its spec. */
const mcpClient = (name: string, url: string, authType: string, spec: Record<string, unknown>) => ({
  apiVersion: API,
  kind: 'MCPClient',
  metadata: meta(name),
  spec: { connectionType: 'http', connectionString: url, authType, ...spec },
});

/** An MCPClient whose headers come from the Secret `<name>-headers`. */
const headersClient = (name: string, url: string, extra: Record<string, unknown> = {}) =>
  mcpClient(name, url, 'headers', { headersFrom: { secretRef: { name: `${name}-headers` } }, ...extra });

const MCPC = 'mcpclients.modelgateway.io';
const VKS = 'virtualkeys.modelgateway.io';

describe('MCPClient with static headers', () => {
  let clientId = '';

  it('a VirtualKey naming a client that does not exist yet is ReferenceNotFound', async () => {
    ok(
      await c.apply('vk', [
        secret('tools-user-key', { value: VK_VALUE }),
        {
          apiVersion: API,
          kind: 'VirtualKey',
          metadata: meta('tools-user'),
          spec: {
            valueFrom: { secretKeyRef: { name: 'tools-user-key', key: 'value' } },
            mcpConfigs: [{ mcpClientName: 'github_tools', toolsToExecute: ['search'] }],
          },
        },
      ]),
    );
    const s = await until(VKS, 'tools-user', { status: 'False', reason: 'ReferenceNotFound' });
    expect(s.conditions?.find((x) => x.type === 'Ready')?.message).toContain('github_tools');
  });

  it('becomes a row; the gateway connects with the Secret headers; Ready with connectionState connected', async () => {
    ok(
      await c.apply('tools', [
        secret('github-tools-headers', { 'x-api-key': 'key-one' }),
        headersClient('github-tools', tools.url, { toolsToExecute: ['*'] }),
      ]),
    );
    const s = await until(MCPC, 'github-tools', { status: 'True', reason: 'Ready' }, { connectionState: 'connected' });
    expect(s).toMatchObject({ clientName: 'github_tools', connectionState: 'connected' });
    expect(s).not.toHaveProperty('oauthStatus');
    clientId = String(s.clientId);
    const res = await admin(`/api/mcp/client/${clientId}`);
    expect(res.status).toBe(200);
    const text = await res.text();
    expect(JSON.parse(text)).toMatchObject({
      config: {
        client_id: clientId,
        name: 'github_tools',
        auth_type: 'headers',
        source: 'kubernetes',
        owner_ref: `${NAMESPACE}/github-tools`,
        headers: { 'x-api-key': '[redacted]' },
      },
    });
    // The Secret's value is never in an answer nor in the resource's status.
    expect(text).not.toContain('key-one');
    expect(JSON.stringify(s)).not.toContain('key-one');
    // The REST API may not edit what Kubernetes owns.
    const put = await admin(`/api/mcp/client/${clientId}`, { method: 'PUT', body: { disabled: true } });
    expect(put.status).toBe(409);
  });

  it('the VirtualKey that waited for the client is Ready and calls its tool through /mcp', async () => {
    await until(VKS, 'tools-user', { status: 'True' });
    const client = await mcpClientAt(gw.url, { 'x-gateway-vk': VK_VALUE });
    try {
      const listed = await client.listTools();
      expect(listed.tools.map((t) => t.name)).toEqual(['github_tools-search']);
      const result = await client.callTool({ name: 'github_tools-search', arguments: { text: 'k8s' } });
      expect(result.content).toEqual([{ type: 'text', text: 'search:{"text":"k8s"}' }]);
    } finally {
      await client.close();
    }
    expect(tools.calls.at(-1)?.headers['x-api-key']).toBe('key-one');
  });

  it('a Secret change updates the headers the gateway sends', async () => {
    accepted.add('key-two');
    ok(await c.apply('tools-rotated', [secret('github-tools-headers', { 'x-api-key': 'key-two', 'x-team': 'a' })]));
    await waitFor(
      async () => tools.requests.some((r) => r.headers['x-api-key'] === 'key-two' && r.headers['x-team'] === 'a'),
      20_000,
      'the tool server to see the rotated headers',
    );
    accepted.delete('key-one');
    await until(MCPC, 'github-tools', { status: 'True' }, { connectionState: 'connected' });
    const res = await admin(`/api/mcp/client/${clientId}`);
    expect(((await res.json()) as { config: { headers: unknown } }).config.headers).toEqual({
      'x-api-key': '[redacted]',
      'x-team': '[redacted]',
    });
  });

  it('a server that refuses the headers is ConnectionError with the reason', async () => {
    ok(
      await c.apply('refused', [
        secret('refused-tools-headers', { 'x-api-key': 'wrong' }),
        headersClient('refused-tools', tools.url),
      ]),
    );
    const s = await until(MCPC, 'refused-tools', { status: 'False', reason: 'ConnectionError' }, {}, 30_000);
    expect(s.connectionState).toBe('error');
    expect(s.conditions?.find((x) => x.type === 'Ready')?.message).toContain(tools.url);
    ok(await c.kubectl('delete', MCPC, 'refused-tools', '-n', NAMESPACE, '--timeout=20s'));
  });

  it('a client created through the API is never taken over (Conflict), and deleting the resource leaves it', async () => {
    const created = await admin('/api/mcp/client', {
      method: 'POST',
      body: { name: 'api_tools', connection_type: 'http', connection_string: tools.url, auth_type: 'none' },
    });
    expect(created.status).toBe(200);
    ok(
      await c.apply('api-tools', [
        secret('api-tools-headers', { 'x-api-key': 'key-two' }),
        headersClient('api-tools', tools.url),
      ]),
    );
    const s = await until(MCPC, 'api-tools', { status: 'False', reason: 'Conflict' });
    expect(s.conditions?.find((x) => x.type === 'Ready')?.message).toBe(
      'MCP client api_tools already exists and is managed by the management API',
    );
    ok(await c.kubectl('delete', MCPC, 'api-tools', '-n', NAMESPACE, '--timeout=20s'));
    const list = (await (await admin('/api/mcp/clients')).json()) as { config: { name: string; source: string } }[];
    expect(list.find((e) => e.config.name === 'api_tools')?.config.source).toBe('api');
  });

  it('deleting the resource deletes the row; the VirtualKey naming it is ReferenceNotFound again', async () => {
    ok(await c.kubectl('delete', MCPC, 'github-tools', '-n', NAMESPACE, '--timeout=20s'));
    expect((await admin(`/api/mcp/client/${clientId}`)).status).toBe(404);
    await until(VKS, 'tools-user', { status: 'False', reason: 'ReferenceNotFound' });
  });
});

describe('MCPClient with server-level OAuth', () => {
  let env: OAuthUpstream;

  beforeAll(async () => {
    const client = {
      client_id: 'gateway',
      client_secret: 'gateway-secret-0123456789',
      redirect_uris: [`${EXTERNAL_URL}/api/oauth/callback`],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'client_secret_post',
    };
    env = await startOAuthUpstream({ clients: [client] }, [echoTool('lookup')]);
  });

  afterAll(async () => {
    await env?.close();
  });

  it('shows oauthStatus pending and the URL to authorize; once authorized, connected and Ready', async () => {
    ok(
      await c.apply('crm', [
        secret('crm-oauth', { 'client-secret': 'gateway-secret-0123456789' }),
        mcpClient('crm', env.upstream.url, 'oauth', {
          oauth: {
            clientId: 'gateway',
            clientSecretRef: { name: 'crm-oauth', key: 'client-secret' },
            serverUrl: env.oauth.url,
            scopes: ['tools:read'],
          },
        }),
      ]),
    );
    const pending = await until(
      MCPC,
      'crm',
      { status: 'False', reason: 'AuthorizationPending' },
      { oauthStatus: 'pending' },
    );
    await waitFor(
      async () => typeof (await statusOf(MCPC, 'crm'))?.authorizeUrl === 'string',
      30_000,
      'a gateway pod to start the authorization and publish its URL',
    );
    const status = (await statusOf(MCPC, 'crm')) as Status;
    const authorizeUrl = String(status.authorizeUrl);
    expect(authorizeUrl.startsWith(`${env.oauth.url}/`)).toBe(true);
    expect(new URL(authorizeUrl).searchParams.get('redirect_uri')).toBe(`${EXTERNAL_URL}/api/oauth/callback`);
    // No secret in the status: not the client secret, and the URL carries none.
    expect(JSON.stringify(status)).not.toContain('gateway-secret-0123456789');
    expect(pending.clientName).toBe('crm');
    // The admin opens the URL; the provider redirects to the public callback URL, which reaches the gateway.
    const callback = new URL(await authorizeInBrowserless(authorizeUrl));
    const res = await fetch(`${gw.url}${callback.pathname}${callback.search}`);
    expect(res.status).toBeLessThan(400);
    const ready = await until(MCPC, 'crm', { status: 'True' }, { connectionState: 'connected' }, 30_000);
    expect(ready.oauthStatus).toBe('authorized');
    expect(ready).not.toHaveProperty('authorizeUrl');
    // Deleting the resource deletes the client with its OAuth configuration and token.
    ok(await c.kubectl('delete', MCPC, 'crm', '-n', NAMESPACE, '--timeout=20s'));
    expect((await admin(`/api/mcp/client/${String(ready.clientId)}`)).status).toBe(404);
    const { rows } = await queryDb('SELECT count(*)::int AS n FROM oauth_configs WHERE mcp_client_id = $1', [
      String(ready.clientId),
    ]);
    expect(rows[0]?.n).toBe(0);
  }, 90_000);

  it('an OAuth endpoint the SSRF guard refuses is InvalidSpec naming the field', async () => {
    ok(
      await c.apply('private-oauth', [
        mcpClient('private-oauth', env.upstream.url, 'oauth', {
          oauth: { clientId: 'gateway', serverUrl: 'http://10.0.0.1/' },
        }),
      ]),
    );
    const s = await until(MCPC, 'private-oauth', { status: 'False', reason: 'InvalidSpec' });
    expect(s.conditions?.find((x) => x.type === 'Ready')?.message).toMatch(/^oauth_config\.server_url: /);
    expect(
      (await queryDb('SELECT count(*)::int AS n FROM mcp_clients WHERE name = $1', ['private_oauth'])).rows[0]?.n,
    ).toBe(0);
    ok(await c.kubectl('delete', MCPC, 'private-oauth', '-n', NAMESPACE, '--timeout=20s'));
  });

  it('per_user_oauth: Ready once synced, with its flow mode; each caller authorizes for itself', async () => {
    ok(
      await c.apply('mail', [
        mcpClient('mail', env.upstream.url, 'per_user_oauth', {
          oauth: { serverUrl: env.oauth.url, scopes: ['tools:read'], flowMode: 'user' },
        }),
      ]),
    );
    const s = await until(MCPC, 'mail', { status: 'True' }, { oauthStatus: 'authorized' });
    expect(s).not.toHaveProperty('authorizeUrl');
    const { rows } = await queryDb(
      'SELECT o.kind, o.flow_mode FROM oauth_configs o JOIN mcp_clients c ON c.oauth_config_id = o.id WHERE c.id = $1',
      [String(s.clientId)],
    );
    expect(rows).toEqual([{ kind: 'per_user', flow_mode: 'user' }]);
  });
});

describe('MCPClient admission', () => {
  it('the CRD refuses a clientName the gateway would refuse and oauth settings on a headers client', async () => {
    const bad = await c.apply('bad-name', [
      {
        ...headersClient('bad-name', 'http://127.0.0.1:1/mcp'),
        spec: { ...headersClient('x', 'http://127.0.0.1:1/mcp').spec, clientName: 'has-dash' },
      },
    ]);
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toContain('clientName');
    const mixed = await c.apply('mixed', [
      {
        ...headersClient('mixed', 'http://127.0.0.1:1/mcp'),
        spec: { ...headersClient('mixed', 'http://127.0.0.1:1/mcp').spec, oauth: { clientId: 'x' } },
      },
    ]);
    expect(mixed.code).not.toBe(0);
    expect(mixed.stderr).toContain('oauth is only for authType oauth or per_user_oauth');
  });
});
