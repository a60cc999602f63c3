// The reference client settings accepted since 1.5.0 with their behaviour, on two gateways (pods) sharing Postgres
// and Redis: mcp_agent_depth bounds the auto-execute loop (the per-request header only lowers it),
// mcp_tool_execution_timeout bounds every MCP tool call (an MCP SDK tool server that sleeps), the deprecated
// enforce_governance_header toggles enforce_auth_on_inference, header_filter_config narrows the caller headers a
// virtual key forwards; every change made on one pod applies on the other without a restart, and bad values are
// refused with a 400 naming the field and nothing stored.
import OpenAI from 'openai';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { echoTool, type McpToolServer, startMcpToolServer } from '../fakes/mcp-servers.ts';
import { createOpenAIFake, type OpenAIFake } from '../fakes/openai.ts';
import type { TestGateway } from '../harness/gateway.ts';
import { waitFor } from '../harness/wait.ts';
import { createVk, type Json, pc } from './governance-helpers.ts';
import { addMcpClient, chatCalls, openaiProvider, startMcpGateway } from './mcp-helpers.ts';

const MODEL = 'openai/gpt-4o-mini';
let openai: OpenAIFake;
let tools: McpToolServer;
let a: TestGateway;
let b: TestGateway;
let key: { id: string; value: string };

beforeAll(async () => {
  openai = await createOpenAIFake().start();
  tools = await startMcpToolServer({
    transport: 'http',
    tools: [
      echoTool('read'),
      { name: 'slow', handler: () => new Promise((r) => setTimeout(() => r('slow done'), 2_500)) },
    ],
  });
  a = await startMcpGateway({ providers: openaiProvider(openai.url) });
  b = await startMcpGateway({
    providers: openaiProvider(openai.url),
    ...(a.databaseUrl ? { databaseUrl: a.databaseUrl } : {}),
    ...(a.redisKeyPrefix ? { redisKeyPrefix: a.redisKeyPrefix } : {}),
  });
  await addMcpClient(a, { name: 'tools', connection_type: 'http', connection_string: tools.url });
  await waitFor(() => b.rt.mcp.connections.tools().length === 2, 15_000, 'pod b lists the tools');
  key = await createVk(a, {
    provider_configs: [pc('openai')],
    allowed_extra_headers: ['*'],
    mcp_configs: [{ mcp_client_name: 'tools', tools_to_execute: ['*'], tools_to_auto_execute: ['*'] }],
  });
}, 60_000);
afterAll(async () => {
  await b?.close();
  await a?.close();
  await openai?.stop();
  await tools?.close();
});
beforeEach(() => {
  openai.reset();
  tools.calls.length = 0;
});
afterEach(async () => {
  expect((await putClient(a, {})).status).toBe(200);
  await waitFor(() => b.rt.state.snapshot.client.mcp_agent_depth === 10, 5_000, 'defaults back on pod b');
});

async function putClient(on: TestGateway, client_config: Json) {
  const res = await on.admin('/api/config', { method: 'PUT', body: { client_config } });
  return { status: res.status, body: (await res.json()) as Json };
}
async function clientView(on: TestGateway): Promise<Json> {
  const res = await on.admin('/api/config');
  return ((await res.json()) as Json)['client_config'] as Json;
}
const sdk = (on: TestGateway, apiKey: string, headers: Record<string, string> = {}) =>
  new OpenAI({ baseURL: `${on.url}/v1`, apiKey, maxRetries: 0, defaultHeaders: headers });

describe('mcp_agent_depth', () => {
  it('is the loop’s bound on every pod; x-gateway-mcp-max-steps lowers it but cannot raise it', async () => {
    expect((await putClient(a, { mcp_agent_depth: 3 })).status).toBe(200);
    await waitFor(() => b.rt.state.snapshot.client.mcp_agent_depth === 3, 5_000, 'pod b has depth 3');
    expect((await clientView(b))['mcp_agent_depth']).toBe(3);
    const loop = () => Array.from({ length: 8 }, () => ({ status: 200, body: chatCalls([{ name: 'tools-read' }]) }));

    openai.script(...loop());
    const first = await sdk(b, key.value)
      .chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: 'loop' }] })
      .withResponse();
    expect(openai.requests).toHaveLength(3);
    expect(tools.calls).toHaveLength(2);
    expect(first.response.headers.get('x-gateway-mcp-max-steps-reached')).toBe('true');

    openai.reset();
    openai.script(...loop());
    const raised = await sdk(b, key.value, { 'x-gateway-mcp-max-steps': '6' })
      .chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: 'loop' }] })
      .withResponse();
    expect(openai.requests).toHaveLength(3);
    expect(raised.response.headers.get('x-gateway-mcp-steps')).toBe('3');

    openai.reset();
    openai.script(...loop());
    await sdk(b, key.value, { 'x-gateway-mcp-max-steps': '2' }).chat.completions.create({
      model: MODEL,
      messages: [{ role: 'user', content: 'loop' }],
    });
    expect(openai.requests).toHaveLength(2);
  });
});

describe('mcp_tool_execution_timeout', () => {
  const execute = (on: TestGateway) =>
    fetch(`${on.url}/v1/mcp/tool/execute`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${key.value}` },
      body: JSON.stringify({ id: 'call_1', type: 'function', function: { name: 'tools-slow', arguments: '{}' } }),
    });

  it('bounds a tool call on every pod, changed without a restart or a reconnect', async () => {
    expect((await putClient(a, { mcp_tool_execution_timeout: 1 })).status).toBe(200);
    await waitFor(() => b.rt.state.snapshot.client.mcp_tool_execution_timeout === 1, 5_000, 'pod b has 1 s');
    const started = Date.now();
    const timedOut = await execute(b);
    const elapsed = Date.now() - started;
    expect(timedOut.status).toBeGreaterThanOrEqual(400);
    expect(JSON.stringify(await timedOut.json())).toMatch(/timed out/i);
    expect(elapsed).toBeLessThan(2_400);

    expect((await putClient(a, { mcp_tool_execution_timeout: 10 })).status).toBe(200);
    await waitFor(() => b.rt.state.snapshot.client.mcp_tool_execution_timeout === 10, 5_000, 'pod b has 10 s');
    const ok = await execute(b);
    expect(ok.status).toBe(200);
    expect(((await ok.json()) as Json)['content']).toBe('slow done');
  });
});

describe('enforce_governance_header (deprecated alias)', () => {
  it('sets enforce_auth_on_inference on every pod; GET shows both with one value', async () => {
    const put = await putClient(a, { enforce_governance_header: false });
    expect(put.status).toBe(200);
    expect(put.body['client_config']).toMatchObject({
      enforce_auth_on_inference: false,
      enforce_governance_header: false,
    });
    await waitFor(() => b.rt.state.snapshot.client.enforce_auth_on_inference === false, 5_000, 'pod b open');
    expect(await clientView(b)).toMatchObject({ enforce_auth_on_inference: false, enforce_governance_header: false });
    expect((await fetch(`${b.url}/v1/models`)).status).toBe(200);

    expect((await putClient(a, { enforce_governance_header: true })).status).toBe(200);
    await waitFor(() => b.rt.state.snapshot.client.enforce_auth_on_inference === true, 5_000, 'pod b enforcing');
    expect((await fetch(`${b.url}/v1/models`)).status).toBe(401);
  });

  it('sent with enforce_auth_on_inference (a GET view sent back), enforce_auth_on_inference wins', async () => {
    const view = await clientView(a);
    const put = await putClient(a, { ...view, enforce_auth_on_inference: false });
    expect(put.status).toBe(200);
    expect(put.body['client_config']).toMatchObject({
      enforce_auth_on_inference: false,
      enforce_governance_header: false,
    });
  });
});

describe('header_filter_config', () => {
  const chatWith = async (headers: Record<string, string>) => {
    await sdk(b, key.value, headers).chat.completions.create({
      model: MODEL,
      messages: [{ role: 'user', content: 'hi' }],
      tool_choice: 'none',
    });
    return openai.requests.at(-1)?.headers ?? {};
  };

  it('narrows what a virtual key forwards (denylist wins); credentials never go, whatever the lists say', async () => {
    const sent = { 'x-team': 'red', 'x-trace': 't1', 'x-other-api-key': 'secret-value' };
    const open = await chatWith(sent);
    expect(open['x-team']).toBe('red');
    expect(open['x-trace']).toBe('t1');

    const put = await putClient(a, {
      header_filter_config: { allowlist: ['X-Team', 'x-trace', 'x-other-api-key'], denylist: ['x-trace'] },
    });
    expect(put.status).toBe(200);
    expect(put.body['client_config']).toMatchObject({
      header_filter_config: { allowlist: ['x-team', 'x-trace', 'x-other-api-key'], denylist: ['x-trace'] },
    });
    await waitFor(
      () => b.rt.state.snapshot.client.header_filter_config.denylist.length === 1,
      5_000,
      'pod b has the filter',
    );
    const filtered = await chatWith({ ...sent, 'x-unlisted': 'u' });
    expect(filtered['x-team']).toBe('red');
    expect(filtered['x-trace']).toBeUndefined();
    expect(filtered['x-unlisted']).toBeUndefined();
    expect(filtered['x-other-api-key']).toBeUndefined();
  });
});

describe('validation', () => {
  it('refuses bad values with a 400 naming the field, and stores nothing', async () => {
    const before = await clientView(a);
    const bad: [Json, string][] = [
      [{ mcp_agent_depth: 0 }, 'mcp_agent_depth'],
      [{ mcp_agent_depth: 51 }, 'mcp_agent_depth'],
      [{ mcp_agent_depth: 2.5 }, 'mcp_agent_depth'],
      [{ mcp_tool_execution_timeout: 0 }, 'mcp_tool_execution_timeout'],
      [{ mcp_tool_execution_timeout: 601 }, 'mcp_tool_execution_timeout'],
      [{ mcp_tool_execution_timeout: '30' }, 'mcp_tool_execution_timeout'],
      [{ enforce_governance_header: 'yes' }, 'enforce_governance_header'],
      [{ header_filter_config: { allowlist: ['not a header'] } }, 'header_filter_config'],
      [{ header_filter_config: { blocklist: [] } }, 'header_filter_config'],
    ];
    for (const [client_config, field] of bad) {
      const res = await putClient(a, client_config);
      expect(res.status, JSON.stringify(client_config)).toBe(400);
      expect(JSON.stringify(res.body), JSON.stringify(client_config)).toContain(field);
    }
    expect(await clientView(a)).toEqual(before);
  });
});
