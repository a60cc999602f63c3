// POST /v1/mcp/tool/execute on a real gateway (Postgres + Redis) with MCP SDK tool servers: one tool call run
// explicitly in the chat and the Responses shapes through the openai SDK's raw request, by a virtual key (its
// mcp_configs decide) or the admin key (the clients' ceilings), and every refusal in the envelope with nothing
// sent env.upstream.
import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { echoTool, type McpToolServer, startMcpToolServer } from '../fakes/mcp-servers.ts';
import { createOpenAIFake, type OpenAIFake } from '../fakes/openai.ts';
import { ADMIN_KEY, INFERENCE_TOKEN, type TestGateway } from '../harness/gateway.ts';
import { waitFor } from '../harness/wait.ts';
import { createVk, expectEnvelope, type Json, pc } from './governance-helpers.ts';
import {
  addMcpClient,
  addPerUserClient,
  completeConsent,
  type OAuthUpstream,
  openaiProvider,
  startFilesServer,
  startMcpGateway,
  startOAuthUpstream,
} from './mcp-helpers.ts';

let gw: TestGateway;
let openai: OpenAIFake;
let files: McpToolServer;
let flaky: McpToolServer;
/** files: read, write (auto: none); no `flaky` entry. */
let key: { id: string; value: string };
let keyNoMcp: { id: string; value: string };

beforeAll(async () => {
  [files, flaky] = await Promise.all([
    startFilesServer(),
    startMcpToolServer({ transport: 'sse', tools: [echoTool('ping')] }),
  ]);
  openai = await createOpenAIFake().start();
  // OAuth tokens are stored sealed.
  gw = await startMcpGateway({ providers: openaiProvider(openai.url), encryptionKey: 'mcp-tool-execute-test-key' });
  await addMcpClient(gw, {
    name: 'files',
    connection_type: 'http',
    connection_string: files.url,
    tools_to_execute: ['read', 'write', 'fail'],
  });
  await addMcpClient(gw, { name: 'flaky', connection_type: 'sse', connection_string: flaky.url });
  key = await createVk(gw, {
    provider_configs: [pc('openai')],
    mcp_configs: [{ mcp_client_name: 'files', tools_to_execute: ['read', 'fail'], tools_to_auto_execute: [] }],
  });
  keyNoMcp = await createVk(gw, { provider_configs: [pc('openai')] });
});
afterAll(async () => {
  await gw?.close();
  await Promise.all([files?.close(), flaky?.close(), openai?.stop()]);
});
beforeEach(() => {
  files.calls.length = 0;
});

function sdk(apiKey: string): OpenAI {
  return new OpenAI({ baseURL: `${gw.url}/v1`, apiKey, maxRetries: 0 });
}

/** The raw call through the SDK: the answer's body, or the SDK's APIError. */
async function execute(apiKey: string, body: unknown, format?: string): Promise<Json> {
  return sdk(apiKey).post('/mcp/tool/execute', { body, ...(format ? { query: { format } } : {}) });
}

interface Refusal {
  status: number;
  headers: Headers;
  body: Json;
}

/** A refused call, read with fetch (the envelope as sent). */
async function refused(auth: string, body: unknown, query = ''): Promise<Refusal> {
  const res = await fetch(`${gw.url}/v1/mcp/tool/execute${query}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${auth}` },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  return { status: res.status, headers: res.headers, body: (await res.json()) as Json };
}

const chatCall = (name: string, args = '{"text":"hello"}') => ({
  id: 'call_123',
  type: 'function',
  function: { name, arguments: args },
});

describe('POST /v1/mcp/tool/execute', () => {
  it('chat form: a tool_calls entry in, a role:tool message out', async () => {
    const out = await execute(key.value, chatCall('files-read'));
    expect(out).toEqual({
      role: 'tool',
      tool_call_id: 'call_123',
      name: 'files-read',
      content: 'read:{"text":"hello"}',
    });
    expect(files.calls).toEqual([expect.objectContaining({ tool: 'read', args: { text: 'hello' } })]);
  });

  it('responses form: a function_call in, a function_call_output out', async () => {
    const out = await execute(
      key.value,
      { call_id: 'call_9', name: 'files-read', arguments: '{"text":"hi"}' },
      'responses',
    );
    expect(out).toMatchObject({
      type: 'function_call_output',
      status: 'completed',
      role: 'assistant',
      call_id: 'call_9',
      name: 'files-read',
      arguments: '{"text":"hi"}',
      output: 'read:{"text":"hi"}',
      content: 'read:{"text":"hi"}',
    });
    expect(String(out['id'])).toMatch(/^fco_/);
  });

  it('a tool that reports an error is a 200 flagged is_error (the model reads the text)', async () => {
    expect(await execute(key.value, chatCall('files-fail'))).toEqual({
      role: 'tool',
      tool_call_id: 'call_123',
      name: 'files-fail',
      content: 'disk on fire',
      is_error: true,
    });
    expect(await execute(key.value, { call_id: 'c', name: 'files-fail' }, 'responses')).toMatchObject({
      status: 'incomplete',
      output: 'disk on fire',
      error: 'disk on fire',
      is_error: true,
    });
  });

  it('the admin key runs any tool within the client’s ceiling, and nothing above it', async () => {
    expect(await execute(ADMIN_KEY, chatCall('files-write'))).toMatchObject({ content: 'write:{"text":"hello"}' });
    expect(await execute(ADMIN_KEY, chatCall('flaky-ping', ''))).toMatchObject({ content: 'ping:{}' });
    const above = await refused(ADMIN_KEY, chatCall('files-delete'));
    expect(expectEnvelope(above, 403, 'permission_denied')).toContain("tool 'files-delete' is not allowed");
  });

  it('refuses a key’s tools outside its mcp_configs (403), and every tool for a key without an entry', async () => {
    const write = await refused(key.value, chatCall('files-write'));
    expect(expectEnvelope(write, 403, 'permission_denied')).toContain('not allowed for this virtual key');
    expectEnvelope(await refused(key.value, chatCall('flaky-ping')), 403, 'permission_denied');
    expectEnvelope(await refused(keyNoMcp.value, chatCall('files-read')), 403, 'permission_denied');
    expect(files.calls).toHaveLength(0);
  });

  it('refuses callers that are neither a virtual key nor the admin key (403), and no credentials (401)', async () => {
    const token = await refused(INFERENCE_TOKEN, chatCall('files-read'));
    expect(expectEnvelope(token, 403, 'permission_denied')).toContain('needs a virtual key');
    const res = await fetch(`${gw.url}/v1/mcp/tool/execute`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(chatCall('files-read')),
    });
    expect(res.status).toBe(401);
    expect(files.calls).toHaveLength(0);
  });

  it('names an unknown client or tool (404) and a name that is not <client>-<tool> (400)', async () => {
    const client = await refused(key.value, chatCall('nope-read'));
    expect(expectEnvelope(client, 404, 'not_found')).toContain("no MCP client named 'nope'");
    const tool = await refused(ADMIN_KEY, { call_id: 'c', name: 'flaky-missing' }, '?format=responses');
    expect(expectEnvelope(tool, 404, 'not_found')).toContain("lists no tool 'missing'");
    const bare = await refused(key.value, chatCall('read'));
    expect(expectEnvelope(bare, 400, 'invalid_request')).toContain("tool 'read': expected <client>-<tool>");
    expect((bare.body['error'] as Json)['param']).toBe('function.name');
  });

  it('refuses arguments that are not a JSON object (400) without calling the tool', async () => {
    const bad = await refused(key.value, chatCall('files-read', '{"text":'));
    expect(expectEnvelope(bad, 400, 'invalid_request')).toContain('arguments: not valid JSON');
    expect((bad.body['error'] as Json)['param']).toBe('function.arguments');
    const list = await refused(key.value, { name: 'files-read', arguments: '[1,2]' }, '?format=responses');
    expect(expectEnvelope(list, 400, 'invalid_request')).toContain('arguments: expected a JSON object');
    expect((list.body['error'] as Json)['param']).toBe('arguments');
    expect(files.calls).toHaveLength(0);
  });

  it('refuses bad bodies of each format and an unknown format (400 naming the field)', async () => {
    const cases: [unknown, string, string][] = [
      [{ id: 'c' }, '', 'function'],
      [{ function: { arguments: '{}' } }, '', 'function.name'],
      [{ type: 'custom', function: { name: 'files-read' } }, '', 'type'],
      [{ function: { name: 'files-read', arguments: { text: 'x' } } }, '', 'function.arguments'],
      ['[]', '', 'expected object'],
      [{ call_id: 'c' }, '?format=responses', 'name'],
      [{ name: 42 }, '?format=responses', 'name'],
      [{ name: 'files-read', arguments: {} }, '?format=responses', 'arguments'],
      [chatCall('files-read'), '?format=xml', 'format'],
    ];
    for (const [body, query, field] of cases) {
      const r = await refused(key.value, body, query);
      expect(expectEnvelope(r, 400, 'invalid_request'), JSON.stringify(body)).toContain(field);
    }
    expect(files.calls).toHaveLength(0);
  });

  it('an unreachable tool server is a 502 in the envelope (not the gateway’s error)', async () => {
    await flaky.kill();
    try {
      const r = await refused(ADMIN_KEY, chatCall('flaky-ping', '{}'));
      expect(r.status).toBe(502);
      expect(r.body).toMatchObject({ status_code: 502, is_gateway_error: false, type: 'upstream_error' });
      const err = r.body['error'] as Json; // the envelope's error object
      expect(err['code']).toBe('mcp_tool_call_failed');
      expect(String(err['message'])).toContain("MCP client 'flaky': tool call failed");
    } finally {
      await flaky.restart();
    }
  });

  it('is in /openapi.json', async () => {
    const doc = (await (await fetch(`${gw.url}/openapi.json`)).json()) as { paths: Record<string, Json> };
    const op = doc.paths['/v1/mcp/tool/execute']?.['post'] as Json | undefined;
    expect(op?.['operationId']).toBe('executeMCPTool');
  });
});

describe('per-user OAuth: explicit and injected calls use the caller’s own token', () => {
  let env: OAuthUpstream;
  let owner: { id: string; value: string };
  let other: { id: string; value: string };

  beforeAll(async () => {
    env = await startOAuthUpstream();
    await addPerUserClient(gw, env, 'notes', { flow_mode: 'vk' });
    const grant = { mcp_client_name: 'notes', tools_to_execute: ['*'], tools_to_auto_execute: ['*'] };
    owner = await createVk(gw, { provider_configs: [pc('openai')], mcp_configs: [grant] });
    other = await createVk(gw, { provider_configs: [pc('openai')], mcp_configs: [grant] });
  });
  afterAll(async () => {
    await env?.close();
  });

  /** The last message of the fake model's `i`-th request (the fake records parsed JSON bodies). */
  const lastMessage = (i: number): Json | undefined =>
    ((openai.requests[i]?.json as Json | undefined)?.['messages'] as Json[] | undefined)?.at(-1);

  const consentIn = (text: string): string => {
    const m = /(https?:\/\/\S+\/api\/oauth\/consent\/[A-Za-z0-9_-]+)/.exec(text);
    if (!m?.[1]) throw new Error(`no consent link in: ${text}`);
    return m[1];
  };

  it('without the key’s authorization: 403 oauth_authorization_required with the consent link', async () => {
    const r = await refused(owner.value, chatCall('notes-whoami', '{}'));
    expect(r.status).toBe(403);
    const err = r.body['error'] as Json; // the envelope's error object
    expect(err['code']).toBe('oauth_authorization_required');
    expect(consentIn(String(err['message'])).startsWith(`${gw.url}/api/oauth/consent/`)).toBe(true);
    expect(env.upstream.calls).toHaveLength(0);
    // The admin key has no virtual key to bind a vk-mode token to: 400 saying so.
    const admin = await refused(ADMIN_KEY, chatCall('notes-whoami', '{}'));
    expect(expectEnvelope(admin, 400, 'invalid_request')).toContain('call it with a virtual key');
  });

  it('after the consent, execute runs with the key’s token; injection auto-executes with it too', async () => {
    const r = await refused(owner.value, chatCall('notes-whoami', '{}'));
    const consent = consentIn(String((r.body['error'] as Json)['message'])); // the envelope's error object
    await completeConsent(consent);

    const out = await execute(owner.value, chatCall('notes-whoami', '{}'));
    const token = String(out['content']);
    expect(await env.oauth.verifyAccessToken(token)).toMatchObject({ accountId: 'test-user' });

    // The client's tools are now listed (through this key's session): injected for both keys.
    await waitFor(() => gw.rt.mcp.connections.tools().some((t) => t.qualifiedName === 'notes-whoami'), 10_000);
    openai.reset();
    const answer = await sdk(owner.value).chat.completions.create({
      model: 'openai/gpt-4o-mini',
      messages: [{ role: 'user', content: 'who am I' }],
    });
    expect(answer.choices[0]?.message.content).toBe('Echo from gpt-4o-mini: who am I');
    expect(openai.requests).toHaveLength(2);
    expect(lastMessage(1)).toMatchObject({ role: 'tool', content: token });

    // The other key has no token of its own: the model reads the consent link as the tool's result.
    openai.reset();
    const calls = env.upstream.calls.length;
    await sdk(other.value).chat.completions.create({
      model: 'openai/gpt-4o-mini',
      messages: [{ role: 'user', content: 'who am I' }],
    });
    const result = String(lastMessage(1)?.['content']);
    expect(result).toMatch(/^Error: MCP client notes needs authorization/);
    expect(consentIn(result)).not.toBe(consent);
    expect(env.upstream.calls).toHaveLength(calls);
  });
});
