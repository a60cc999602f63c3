// Shared pieces of the MCP end-to-end tests (mcp-*.test.ts): a gateway with MCP enabled for loopback tool servers
// (and an encryption key for OAuth), the OAuth server (oidc-provider) with its OAuth-protected MCP SDK tool server,
// MCP clients created through the admin API, tool calls through /mcp (the MCP SDK client) and through
// /v1/mcp/tool/execute, and the browser's part of a per-user consent.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, expect } from 'vitest';
import { echoTool, type FakeTool, type McpToolServer, startMcpToolServer } from '../fakes/mcp-servers.ts';
import {
  authorizeInBrowserless,
  type OAuthProtectedMcpServer,
  type OAuthServer,
  type OAuthServerOptions,
  startOAuthProtectedMcpServer,
  startOAuthServer,
} from '../fakes/oauth-server.ts';
import { startTestGateway, type TestGateway, type TestGatewayOptions } from '../harness/gateway.ts';
import { waitFor } from '../harness/wait.ts';
import { adminJson, type Json } from './governance-helpers.ts';

/** What config.json needs for MCP clients on loopback tool servers (the SSRF guard refuses them otherwise). */
export const LOOPBACK_MCP = { allowed_private_networks: ['127.0.0.0/8'] };

/** config.json `providers.openai` pointing at a fake OpenAI upstream: one key serving every model, no retries. */
export function openaiProvider(url: string): Json {
  return {
    openai: {
      network_config: { base_url: url, max_retries: 0 },
      keys: [{ id: 'k1', name: 'key-one', value: 'sk-one-aaaaaaaaaaaaaaaa', models: ['*'] }],
    },
  };
}

/** A gateway whose MCP clients may reach loopback tool servers; `providers` and the encryption key as given. */
export function startMcpGateway(
  opts: { providers?: Json; encryptionKey?: string } & Omit<TestGatewayOptions, 'config'> = {},
): Promise<TestGateway> {
  const { providers, ...rest } = opts;
  return startTestGateway({ ...rest, config: { ...(providers ? { providers } : {}), mcp: LOOPBACK_MCP } });
}

/**
 * The environment `start` builds, for the calling test file: started before its tests, closed after them. Read
 * its fields inside tests and hooks only (beforeAll fills them in).
 */
export function useEnv<E extends { close(): Promise<void> }>(start: () => Promise<E>): E {
  // Filled in by beforeAll, before any test or later hook reads it.
  const env = {} as E;
  beforeAll(async () => {
    Object.assign(env, await start());
  });
  afterAll(async () => {
    await env.close?.();
  });
  return env;
}

/** An admin call; the status and the JSON body (`{}` when empty), whatever the status. */
export async function send(
  gw: TestGateway,
  method: string,
  path: string,
  body?: unknown,
): Promise<{ status: number; body: Json }> {
  const res = await gw.admin(path, body === undefined ? { method } : { method, body });
  const text = await res.text();
  return { status: res.status, body: text ? (JSON.parse(text) as Json) : {} };
}

/** A GET as a browser without following redirects: status, headers and the page. */
export async function page(url: string): Promise<{ status: number; headers: Headers; body: string }> {
  const res = await fetch(url, { redirect: 'manual' });
  return { status: res.status, headers: res.headers, body: await res.text() };
}

/** The token of an `Authorization: Bearer <token>` header ('' without one). */
export function bearerOf(header: string | string[] | undefined): string {
  const v = Array.isArray(header) ? header[0] : header;
  return /^Bearer\s+(.+)$/i.exec(v ?? '')?.[1] ?? '';
}

/** A tool answering the bearer token it was called with: whose token the gateway used. */
export const whoamiTool: FakeTool = {
  name: 'whoami',
  description: 'the bearer token it was called with',
  handler: (_args, ctx) => bearerOf(ctx.headers.authorization),
};

/** The body of POST /api/mcp/client for an OAuth client (`oauth` or `per_user_oauth`) over streamable HTTP. */
export function oauthClient(name: string, url: string, authType: 'oauth' | 'per_user_oauth', oauthConfig: Json): Json {
  return { name, connection_type: 'http', connection_string: url, auth_type: authType, oauth_config: oauthConfig };
}

export interface OAuthUpstream {
  oauth: OAuthServer;
  /** An OAuth-protected MCP SDK tool server (streamable HTTP) accepting only tokens `oauth` issued. */
  upstream: OAuthProtectedMcpServer;
  close(): Promise<void>;
}

/** The OAuth server (`opts`) and an MCP server it protects, listing `tools` (default: whoami). */
export async function startOAuthUpstream(
  opts: OAuthServerOptions = {},
  tools: FakeTool[] = [whoamiTool],
): Promise<OAuthUpstream> {
  const oauth = await startOAuthServer(opts);
  const upstream = await startOAuthProtectedMcpServer(oauth, { transport: 'http', tools });
  return {
    oauth,
    upstream,
    async close() {
      await upstream.close();
      await oauth.close();
    },
  };
}

/** Creates per_user_oauth client `name` on `up`'s protected server (scope tools:read, then `extra`); its id. */
export async function addPerUserClient(gw: TestGateway, up: OAuthUpstream, name: string, extra: Json = {}) {
  const oauthConfig = { server_url: up.oauth.url, scopes: ['tools:read'], ...extra };
  const created = await adminJson(
    gw,
    '/api/mcp/client',
    'POST',
    oauthClient(name, up.upstream.url, 'per_user_oauth', oauthConfig),
  );
  return String((created['client'] as Json)['client_id']); // the create answer's client view
}

/** The first per-user consent link in `text` (a tool error or result). */
export function consentUrlIn(text: string): string {
  const m = /(https?:\/\/\S+\/api\/oauth\/consent\/puf_[A-Za-z0-9_-]{32})/.exec(text);
  if (!m?.[1]) throw new Error(`no consent URL in: ${text}`);
  return m[1];
}

/** The flow id at the end of a consent link. */
export const flowIdOf = (url: string): string => url.slice(url.lastIndexOf('/') + 1);

/** The browser's path from a consent link: its authorize step (302 upstream), then sign-in; the callback URL. */
export async function signInFromConsent(consentUrl: string): Promise<string> {
  const start = await fetch(`${consentUrl}/authorize`, { redirect: 'manual' });
  expect(start.status).toBe(302);
  return authorizeInBrowserless(start.headers.get('location') ?? '');
}

/** Completes a consent in the browser: sign-in, then the gateway's callback page (200). Returns the callback URL. */
export async function completeConsent(consentUrl: string): Promise<string> {
  const callback = await signInFromConsent(consentUrl);
  const done = await fetch(callback);
  expect(done.status, await done.clone().text()).toBe(200);
  return callback;
}

/** Waits until this gateway's connection to MCP client `id` is connected. */
export function untilConnected(gw: TestGateway, id: string, what = `${id} connected`, timeoutMs = 10_000) {
  return waitFor(() => gw.rt.mcp.connections.state(id).state === 'connected', timeoutMs, what);
}

/** Creates an MCP client through the API and waits until it is connected with its tools listed; returns its id. */
export async function addMcpClient(gw: TestGateway, body: Json): Promise<string> {
  const created = await adminJson(gw, '/api/mcp/client', 'POST', body);
  const id = String((created['client'] as Json)['client_id']); // the create answer's client view
  await waitFor(
    async () => {
      const view = await adminJson(gw, `/api/mcp/client/${id}`);
      return view['state'] === 'connected' && Array.isArray(view['tools']) && view['tools'].length > 0;
    },
    15_000,
    `MCP client ${String(body['name'])} connected`,
  );
  return id;
}

export interface ToolOutcome {
  isError: boolean;
  text: string;
}

/** An MCP SDK client on the gateway's /mcp (at `baseUrl`) with these headers (e.g. `x-gateway-vk`). */
export async function mcpClientAt(baseUrl: string, headers: Record<string, string>): Promise<Client> {
  const client = new Client({ name: 'mcp-e2e', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${baseUrl}/mcp`), { requestInit: { headers } }));
  return client;
}

/** One tool call (no arguments) through /mcp as virtual key `vk`, with extra headers; its text joined. */
export async function callTool(
  gw: TestGateway,
  vk: string,
  name: string,
  headers: Record<string, string> = {},
): Promise<ToolOutcome> {
  const client = await mcpClientAt(gw.url, { 'x-gateway-vk': vk, ...headers });
  try {
    const r = await client.callTool({ name, arguments: {} });
    const content = (r.content ?? []) as Array<{ type: string; text?: string }>;
    return { isError: r.isError === true, text: content.map((c) => c.text ?? '').join('\n') };
  } finally {
    await client.close();
  }
}

/** One tool call (no arguments) through POST /v1/mcp/tool/execute (chat form) as virtual key `vk`. */
export async function executeAs(
  gw: TestGateway,
  vk: string,
  name: string,
  headers: Record<string, string> = {},
): Promise<ToolOutcome & { status: number }> {
  const res = await fetch(`${gw.url}/v1/mcp/tool/execute?format=chat`, {
    method: 'POST',
    headers: { 'x-gateway-vk': vk, 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ id: 'call_1', type: 'function', function: { name, arguments: '{}' } }),
  });
  const body = (await res.json()) as Json;
  if (res.status === 200) return { status: 200, isError: body['is_error'] === true, text: String(body['content']) };
  const message = (body['error'] as Json | undefined)?.['message'] ?? JSON.stringify(body);
  return { status: res.status, isError: true, text: String(message) };
}

/** The tool server both the injection and the execute tests call: read, write, delete (echo) and fail. */
export function startFilesServer(): Promise<McpToolServer> {
  return startMcpToolServer({
    transport: 'http',
    tools: [
      echoTool('read'),
      echoTool('write'),
      echoTool('delete'),
      {
        name: 'fail',
        description: 'always fails',
        handler: () => {
          throw new Error('disk on fire');
        },
      },
    ],
  });
}

/** A chat answer (OpenAI wire format) that calls `calls`, as the model would. */
export function chatCalls(calls: { name: string; args?: Json }[]): Json {
  return {
    id: `chatcmpl-scripted-${Math.random().toString(36).slice(2)}`,
    object: 'chat.completion',
    created: 1_700_000_000,
    model: 'gpt-4o-mini',
    choices: [
      {
        index: 0,
        message: {
          role: 'assistant',
          content: null,
          tool_calls: calls.map((c, i) => ({
            id: `call_${i}_${Math.random().toString(36).slice(2, 8)}`,
            type: 'function',
            function: { name: c.name, arguments: JSON.stringify(c.args ?? {}) },
          })),
        },
        finish_reason: 'tool_calls',
      },
    ],
    usage: { prompt_tokens: 10, completion_tokens: 4, total_tokens: 14 },
  };
}
