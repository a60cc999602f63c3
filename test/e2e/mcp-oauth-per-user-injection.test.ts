// Per-user OAuth through tool injection, end to end (Postgres + Redis, oidc-provider, an OAuth-protected MCP SDK
// server, a fake OpenAI upstream, the official openai SDK as the caller): when the model calls a per-user tool the
// gateway auto-executes it with the calling key's own token; a key that has not authorized gets its consent link
// as the tool's result, which the model reads.
import OpenAI from 'openai';
import { afterAll, beforeAll, expect, it } from 'vitest';
import {
  authorizeInBrowserless,
  type OAuthProtectedMcpServer,
  type OAuthServer,
  startOAuthProtectedMcpServer,
  startOAuthServer,
} from '../fakes/oauth-server.ts';
import { createOpenAIFake, type OpenAIFake } from '../fakes/openai.ts';
import { startTestGateway, type TestGateway } from '../harness/gateway.ts';
import { waitFor } from '../harness/wait.ts';
import { adminJson, createVk, type Json, pc } from './governance-helpers.ts';

let gw: TestGateway;
let oauth: OAuthServer;
let upstream: OAuthProtectedMcpServer;
let openai: OpenAIFake;
let clientId = '';
const keys: Record<'a' | 'b', { id: string; value: string }> = { a: { id: '', value: '' }, b: { id: '', value: '' } };

function bearerOf(header: string | string[] | undefined): string {
  const v = Array.isArray(header) ? header[0] : header;
  return /^Bearer\s+(.+)$/i.exec(v ?? '')?.[1] ?? '';
}

beforeAll(async () => {
  oauth = await startOAuthServer();
  openai = await createOpenAIFake().start();
  upstream = await startOAuthProtectedMcpServer(oauth, {
    transport: 'http',
    tools: [
      {
        name: 'whoami',
        description: 'the bearer token it was called with',
        handler: (_a, ctx) => bearerOf(ctx.headers.authorization),
      },
    ],
  });
  gw = await startTestGateway({
    config: {
      providers: {
        openai: {
          network_config: { base_url: openai.url, max_retries: 0 },
          keys: [{ id: 'k1', name: 'key-one', value: 'sk-one-aaaaaaaaaaaaaaaa', models: ['*'] }],
        },
      },
      mcp: { allowed_private_networks: ['127.0.0.0/8'] },
    },
    encryptionKey: 'per-user-injection-test-key',
  });
  const created = await adminJson(gw, '/api/mcp/client', 'POST', {
    name: 'notes',
    connection_type: 'http',
    connection_string: upstream.url,
    auth_type: 'per_user_oauth',
    oauth_config: { server_url: oauth.url, scopes: ['tools:read'] },
  });
  clientId = String((created['client'] as Json)['client_id']);
  for (const k of ['a', 'b'] as const) {
    keys[k] = await createVk(gw, {
      provider_configs: [pc('openai')],
      mcp_configs: [{ mcp_client_name: 'notes', tools_to_execute: ['*'], tools_to_auto_execute: ['*'] }],
    });
  }
  // Key a authorizes ahead of its first call (the admin sends it the link), then lists the tools through its session.
  const started = await adminJson(gw, '/api/oauth/per-user/flows', 'POST', {
    mcp_client_id: clientId,
    virtual_key_id: keys.a.id,
  });
  const go = await fetch(`${String(started['consent_url'])}/authorize`, { redirect: 'manual' });
  const callback = await authorizeInBrowserless(go.headers.get('location') ?? '');
  expect((await fetch(callback)).status).toBe(200);
  const first = await fetch(`${gw.url}/v1/mcp/tool/execute?format=chat`, {
    method: 'POST',
    headers: { 'x-gateway-vk': keys.a.value, 'content-type': 'application/json' },
    body: JSON.stringify({ id: 'c0', type: 'function', function: { name: 'notes-whoami', arguments: '{}' } }),
  });
  expect(first.status).toBe(200);
  await waitFor(
    async () => gw.rt.mcp.connections.tools().some((t) => t.qualifiedName === 'notes-whoami'),
    10_000,
    'notes-whoami listed',
  );
});
afterAll(async () => {
  await gw?.close();
  await upstream?.close();
  await oauth?.close();
  await openai?.stop();
});

/** A chat answer that calls notes-whoami, as the model would. */
const callsWhoami = {
  status: 200,
  body: {
    id: 'chatcmpl-scripted',
    object: 'chat.completion',
    created: 1_700_000_000,
    model: 'gpt-4o-mini',
    choices: [
      {
        index: 0,
        message: {
          role: 'assistant',
          content: null,
          tool_calls: [{ id: 'call_w', type: 'function', function: { name: 'notes-whoami', arguments: '{}' } }],
        },
        finish_reason: 'tool_calls',
      },
    ],
    usage: { prompt_tokens: 10, completion_tokens: 4, total_tokens: 14 },
  },
};

/** Runs one injected chat as `key`; returns the tool message the second model call carried. */
async function toolResultFor(key: string): Promise<string> {
  openai.reset();
  openai.script(callsWhoami);
  const client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: key, maxRetries: 0 });
  await client.chat.completions.create({ model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'who?' }] });
  expect(openai.requests).toHaveLength(2);
  const first = openai.requests[0]?.json as Json; // the fake records parsed JSON bodies
  expect(((first['tools'] as Json[]) ?? []).map((t) => (t['function'] as Json)['name'])).toContain('notes-whoami');
  const second = openai.requests[1]?.json as Json; // the fake records parsed JSON bodies
  const messages = second['messages'] as Json[];
  const tool = messages.find((m) => m['role'] === 'tool');
  return String(tool?.['content']);
}

it('an authorized key’s auto-executed call carries its own token', async () => {
  const result = await toolResultFor(keys.a.value);
  expect(await oauth.verifyAccessToken(result)).toBeDefined();
  expect(bearerOf(upstream.calls.at(-1)?.headers.authorization)).toBe(result);
});

it('a key that has not authorized gets its own consent link as the tool result, and nothing reaches the tool', async () => {
  const before = upstream.calls.length;
  const result = await toolResultFor(keys.b.value);
  expect(result).toContain('needs authorization');
  const url = /(https?:\/\/\S+\/api\/oauth\/consent\/(puf_[A-Za-z0-9_-]{32}))/.exec(result);
  expect(url?.[1]?.startsWith(gw.url)).toBe(true);
  expect(upstream.calls.length).toBe(before);
  const detail = await adminJson(gw, `/api/oauth/per-user/flows/${url?.[2]}`);
  expect(detail).toMatchObject({ status: 'pending', flow_mode: 'vk', virtual_key: { id: keys.b.id } });
});
