// Per-user OAuth through tool injection, end to end (Postgres + Redis, oidc-provider, an OAuth-protected MCP SDK
// server, a fake OpenAI upstream, the official openai SDK as the caller): when the model calls a per-user tool the
// gateway auto-executes it with the calling key's own token; a key that has not authorized gets its consent link
// as the tool's result, which the model reads.
import OpenAI from 'openai';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createOpenAIFake, type OpenAIFake } from '../fakes/openai.ts';
import type { TestGateway } from '../harness/gateway.ts';
import { waitFor } from '../harness/wait.ts';
import { adminJson, createVk, type Json, pc } from './governance-helpers.ts';
import {
  addPerUserClient,
  bearerOf,
  chatCalls,
  completeConsent,
  consentUrlIn,
  executeAs,
  flowIdOf,
  type OAuthUpstream,
  openaiProvider,
  startMcpGateway,
  startOAuthUpstream,
} from './mcp-helpers.ts';

let gw: TestGateway;
let env: OAuthUpstream;
let openai: OpenAIFake;
let clientId = '';
const keys: Record<'a' | 'b', { id: string; value: string }> = { a: { id: '', value: '' }, b: { id: '', value: '' } };

beforeAll(async () => {
  env = await startOAuthUpstream();
  openai = await createOpenAIFake().start();
  gw = await startMcpGateway({ providers: openaiProvider(openai.url), encryptionKey: 'per-user-injection-test-key' });
  clientId = await addPerUserClient(gw, env, 'notes');
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
  await completeConsent(String(started['consent_url']));
  expect((await executeAs(gw, keys.a.value, 'notes-whoami')).status).toBe(200);
  await waitFor(
    async () => gw.rt.mcp.connections.tools().some((t) => t.qualifiedName === 'notes-whoami'),
    10_000,
    'notes-whoami listed',
  );
});
afterAll(async () => {
  await gw?.close();
  await env?.close();
  await openai?.stop();
});

/** A chat answer that calls notes-whoami, as the model would. */
const callsWhoami = { status: 200, body: chatCalls([{ name: 'notes-whoami' }]) };

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
  expect(await env.oauth.verifyAccessToken(result)).toBeDefined();
  expect(bearerOf(env.upstream.calls.at(-1)?.headers.authorization)).toBe(result);
});

it('a key that has not authorized gets its own consent link as the tool result, and nothing reaches the tool', async () => {
  const before = env.upstream.calls.length;
  const result = await toolResultFor(keys.b.value);
  expect(result).toContain('needs authorization');
  const url = consentUrlIn(result);
  expect(url.startsWith(gw.url)).toBe(true);
  expect(env.upstream.calls.length).toBe(before);
  const detail = await adminJson(gw, `/api/oauth/per-user/flows/${flowIdOf(url)}`);
  expect(detail).toMatchObject({ status: 'pending', flow_mode: 'vk', virtual_key: { id: keys.b.id } });
});
