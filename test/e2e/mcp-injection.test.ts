// MCP tool injection and the auto-execute loop on a real gateway (Postgres + Redis): MCP SDK tool servers as the
// upstream tool servers (created through /api/mcp/client), a fake OpenAI upstream as the model, the official
// openai SDK as the caller with a virtual key. What the upstream receives (the key's tools, nothing else), the
// loop for chat and Responses (the second model call carries the tool result), calls that go back to the caller,
// the bound, streams, and every step charged to the key and logged.
import Anthropic from '@anthropic-ai/sdk';
import { BedrockRuntimeClient, ConverseCommand } from '@aws-sdk/client-bedrock-runtime';
import { GoogleGenAI } from '@google/genai';
import { NodeHttpHandler } from '@smithy/node-http-handler';
import { CohereClientV2 } from 'cohere-ai';
import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type AnthropicFake, createAnthropicFake } from '../fakes/anthropic.ts';
import { createGeminiFake, type GeminiFake } from '../fakes/gemini.ts';
import { echoTool, type McpToolServer, startMcpToolServer } from '../fakes/mcp-servers.ts';
import { createOpenAIFake, type OpenAIFake } from '../fakes/openai.ts';
import { startTestGateway, type TestGateway } from '../harness/gateway.ts';
import { waitFor } from '../harness/wait.ts';
import {
  adminJson,
  budgetsOf,
  createVk,
  type Json,
  logOf,
  pc,
  waitFor as poll,
  usd,
  VK,
} from './governance-helpers.ts';

let gw: TestGateway;
let openai: OpenAIFake;
let anthropic: AnthropicFake;
let gemini: GeminiFake;
let files: McpToolServer;
let web: McpToolServer;
/** files: read, write, fail (auto: read, fail); no web tools. */
let keyA: { id: string; value: string; view: Json };
/** No mcp_configs at all. */
let keyB: { id: string; value: string; view: Json };

const MODEL = 'openai/gpt-4o-mini';

beforeAll(async () => {
  [openai, anthropic, gemini, files, web] = await Promise.all([
    createOpenAIFake().start(),
    createAnthropicFake().start(),
    createGeminiFake().start(),
    startMcpToolServer({
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
    }),
    startMcpToolServer({ transport: 'sse', tools: [echoTool('search')] }),
  ]);
  gw = await startTestGateway({
    config: {
      providers: {
        openai: {
          network_config: { base_url: openai.url, max_retries: 0 },
          keys: [{ id: 'k1', name: 'key-one', value: 'sk-one-aaaaaaaaaaaaaaaa', models: ['*'] }],
        },
        anthropic: {
          network_config: { base_url: anthropic.url, max_retries: 0 },
          keys: [{ id: 'a1', name: 'anthropic-one', value: 'sk-ant-aaaaaaaaaaaaaaaa', models: ['*'] }],
        },
        gemini: {
          network_config: { base_url: gemini.url, max_retries: 0 },
          keys: [{ id: 'g1', name: 'gemini-one', value: 'gm-key-aaaaaaaaaaaaaaaa', models: ['*'] }],
        },
      },
      mcp: { allowed_private_networks: ['127.0.0.0/8'] },
    },
  });
  // Every output token costs 0.0025 USD, so each step has a cost of its own.
  await adminJson(gw, '/api/governance/pricing-overrides', 'POST', {
    scope: 'global',
    provider: 'openai',
    model: 'gpt-4o-mini',
    input_cost_per_token: 0,
    output_cost_per_token: 0.0025,
  });
  await addClient({
    name: 'files',
    connection_type: 'http',
    connection_string: files.url,
    // The client's own ceiling: `delete` is never executable, whatever a key says.
    tools_to_execute: ['read', 'write', 'fail'],
    tools_to_auto_execute: ['read', 'fail'],
  });
  await addClient({ name: 'web', connection_type: 'sse', connection_string: web.url });
  keyA = await createVk(gw, {
    provider_configs: [pc('openai'), pc('anthropic'), pc('gemini')],
    budgets: [{ max_limit: 1000, reset_duration: '1d' }],
    mcp_configs: [{ mcp_client_name: 'files', tools_to_execute: ['*'], tools_to_auto_execute: ['read', 'fail'] }],
  });
  keyB = await createVk(gw, { provider_configs: [pc('openai')] });
});
afterAll(async () => {
  await gw?.close();
  await Promise.all([openai?.stop(), anthropic?.stop(), gemini?.stop(), files?.close(), web?.close()]);
});
beforeEach(() => {
  openai.reset();
  anthropic.reset();
  gemini.reset();
  files.calls.length = 0;
});

async function addClient(body: Json): Promise<void> {
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
}

function sdk(key: string, headers: Record<string, string> = {}): OpenAI {
  return new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: key, maxRetries: 0, defaultHeaders: headers });
}

const body = (i: number): Json => openai.requests[i]?.json as Json; // the fake records parsed JSON bodies
const toolNames = (b: Json): unknown[] =>
  ((b['tools'] as Json[] | undefined) ?? []).map((t) => (t['function'] as Json | undefined)?.['name'] ?? t['name']);

type SdkToolCall = OpenAI.Chat.Completions.ChatCompletionMessageToolCall;
const fnName = (c: SdkToolCall): string | undefined => (c.type === 'function' ? c.function.name : undefined);
const fnArgs = (c: SdkToolCall | undefined): string | undefined =>
  c?.type === 'function' ? c.function.arguments : undefined;

/** A chat answer (OpenAI wire format) that calls `calls`, as the model would. */
function chatCalls(calls: { name: string; args?: Json }[]): Json {
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

describe('tool injection', () => {
  it('gives the upstream exactly the key’s allowed tools with their descriptions and schemas', async () => {
    const r = await sdk(keyA.value).chat.completions.create({
      model: MODEL,
      messages: [{ role: 'user', content: 'hi' }],
      tool_choice: 'none',
    });
    expect(r.choices[0]?.message.content).toContain('Echo from gpt-4o-mini');
    expect(openai.requests).toHaveLength(1);
    const tools = body(0)['tools'] as Json[];
    // Not web-search (no mcp_configs entry), not files-delete (above the client's ceiling).
    expect(toolNames(body(0))).toEqual(['files-read', 'files-write', 'files-fail']);
    expect(tools[0]).toEqual({
      type: 'function',
      function: {
        name: 'files-read',
        description: 'echoes its arguments (read)',
        parameters: { type: 'object', properties: { text: { type: 'string' } } },
      },
    });
  });

  it('gives a key without an mcp_configs entry no tools, and leaves its body untouched', async () => {
    await sdk(keyB.value).chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: 'hi' }] });
    expect(body(0)['tools']).toBeUndefined();
    expect(files.calls).toHaveLength(0);
  });

  it('keeps the caller’s own tool of the same name, whose call goes back to the caller', async () => {
    const r = await sdk(keyA.value).chat.completions.create({
      model: MODEL,
      messages: [{ role: 'user', content: 'hi' }],
      tools: [{ type: 'function', function: { name: 'files-read', parameters: { type: 'object' } } }],
    });
    // The fake calls the first tool: the caller's.
    expect(r.choices[0]?.message.tool_calls?.[0]).toMatchObject({ function: { name: 'files-read' } });
    expect(toolNames(body(0))).toEqual(['files-read', 'files-write', 'files-fail']);
    expect((body(0)['tools'] as Json[])[0]).toEqual({
      type: 'function',
      function: { name: 'files-read', parameters: { type: 'object' } },
    });
    expect(openai.requests).toHaveLength(1);
    expect(files.calls).toHaveLength(0);
  });

  it('injects on /compat-a too (OpenAI’s own paths, a bare model)', async () => {
    const compat = new OpenAI({ baseURL: `${gw.url}/compat-a/v1`, apiKey: keyA.value, maxRetries: 0 });
    await compat.chat.completions.create({
      model: 'gpt-4o-mini',
      messages: [{ role: 'user', content: 'hi' }],
      tool_choice: 'none',
    });
    expect(toolNames(body(0))).toEqual(['files-read', 'files-write', 'files-fail']);
  });

  it('injects into Responses requests as non-strict function tools', async () => {
    await sdk(keyA.value).responses.create({ model: MODEL, input: 'hi' });
    expect(toolNames(body(0))).toEqual(['files-read', 'files-write', 'files-fail']);
    expect((body(0)['tools'] as Json[])[0]).toMatchObject({ type: 'function', name: 'files-read', strict: false });
  });
});

describe('auto-execution', () => {
  it('chat: runs the tool, calls the model again with its result, answers the final text', async () => {
    const { data, response } = await sdk(keyA.value)
      .chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: 'look it up' }] })
      .withResponse();
    // The fake called files-read with {query: <last user text>}; the gateway ran it.
    expect(files.calls).toEqual([expect.objectContaining({ tool: 'read', args: { query: 'look it up' } })]);
    expect(openai.requests).toHaveLength(2);
    const messages = body(1)['messages'] as Json[];
    expect(messages).toHaveLength(3);
    const call: Json = (messages[1]?.['tool_calls'] as Json[] | undefined)?.[0] ?? {}; // the assistant turn sent back
    expect(messages[1]).toMatchObject({ role: 'assistant', content: null });
    expect(call['function']).toEqual({ name: 'files-read', arguments: '{"query":"look it up"}' });
    expect(messages[2]).toEqual({
      role: 'tool',
      tool_call_id: call['id'],
      content: 'read:{"query":"look it up"}',
    });
    expect(data.choices[0]?.message.content).toBe('Echo from gpt-4o-mini: look it up');
    expect(response.headers.get('x-gateway-mcp-steps')).toBe('2');
    expect(response.headers.get('x-gateway-mcp-max-steps-reached')).toBeNull();
  });

  it('Responses: the second request carries the function_call and its function_call_output', async () => {
    openai.script({
      pathIncludes: '/responses',
      status: 200,
      body: {
        id: 'resp_scripted',
        object: 'response',
        created_at: 1_700_000_000,
        status: 'completed',
        model: 'gpt-4o-mini',
        output: [
          {
            type: 'function_call',
            id: 'fc_1',
            call_id: 'call_r1',
            name: 'files-read',
            arguments: '{"text":"notes"}',
            status: 'completed',
          },
        ],
        usage: {
          input_tokens: 5,
          output_tokens: 3,
          total_tokens: 8,
          input_tokens_details: { cached_tokens: 0 },
          output_tokens_details: { reasoning_tokens: 0 },
        },
      },
    });
    const r = await sdk(keyA.value).responses.create({ model: MODEL, input: 'read my notes' });
    expect(files.calls).toEqual([expect.objectContaining({ tool: 'read', args: { text: 'notes' } })]);
    expect(openai.requests).toHaveLength(2);
    expect(body(1)['input']).toEqual([
      { role: 'user', content: 'read my notes' },
      {
        type: 'function_call',
        id: 'fc_1',
        call_id: 'call_r1',
        name: 'files-read',
        arguments: '{"text":"notes"}',
        status: 'completed',
      },
      { type: 'function_call_output', call_id: 'call_r1', output: 'read:{"text":"notes"}' },
    ]);
    expect(r.output_text).toBe('Echo from gpt-4o-mini: read my notes');
  });

  it('a call to a tool the key may run but not auto-execute comes back to the caller as is', async () => {
    openai.script({
      status: 200,
      body: chatCalls([{ name: 'files-read' }, { name: 'files-write', args: { text: 'x' } }]),
    });
    const r = await sdk(keyA.value).chat.completions.create({
      model: MODEL,
      messages: [{ role: 'user', content: 'write it' }],
    });
    expect(r.choices[0]?.finish_reason).toBe('tool_calls');
    expect(r.choices[0]?.message.tool_calls?.map(fnName)).toEqual(['files-read', 'files-write']);
    expect(openai.requests).toHaveLength(1);
    expect(files.calls).toHaveLength(0);
  });

  it('a tool error reaches the model as the tool’s result, not as an HTTP error', async () => {
    openai.script({ status: 200, body: chatCalls([{ name: 'files-fail' }]) });
    const r = await sdk(keyA.value).chat.completions.create({
      model: MODEL,
      messages: [{ role: 'user', content: 'try it' }],
    });
    expect(r.choices[0]?.message.content).toBe('Echo from gpt-4o-mini: try it');
    const messages = body(1)['messages'] as Json[];
    expect(messages.at(-1)).toMatchObject({ role: 'tool', content: 'disk on fire' });
  });

  it('stops at the bound: the last answer with its calls, and a header saying so', async () => {
    openai.script(
      { status: 200, body: chatCalls([{ name: 'files-read', args: { text: '1' } }]) },
      { status: 200, body: chatCalls([{ name: 'files-read', args: { text: '2' } }]) },
      { status: 200, body: chatCalls([{ name: 'files-read', args: { text: '3' } }]) },
    );
    const { data, response } = await sdk(keyA.value, { 'x-gateway-mcp-max-steps': '2' })
      .chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: 'loop' }] })
      .withResponse();
    expect(openai.requests).toHaveLength(2);
    expect(files.calls.map((c) => c.args)).toEqual([{ text: '1' }]);
    expect(fnArgs(data.choices[0]?.message.tool_calls?.[0])).toBe('{"text":"2"}');
    expect(response.headers.get('x-gateway-mcp-steps')).toBe('2');
    expect(response.headers.get('x-gateway-mcp-max-steps-reached')).toBe('true');
  });

  it('the default bound is 10 model calls', async () => {
    openai.script(...Array.from({ length: 12 }, () => ({ status: 200, body: chatCalls([{ name: 'files-read' }]) })));
    const { response } = await sdk(keyA.value)
      .chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: 'loop' }] })
      .withResponse();
    expect(openai.requests).toHaveLength(10);
    expect(files.calls).toHaveLength(9);
    expect(response.headers.get('x-gateway-mcp-max-steps-reached')).toBe('true');
  });

  it('refuses a bad x-gateway-mcp-max-steps with a 400 naming it, before any model call', async () => {
    const err = await sdk(keyA.value, { 'x-gateway-mcp-max-steps': 'lots' })
      .chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: 'hi' }] })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    expect((err as InstanceType<typeof OpenAI.BadRequestError>).message).toContain('x-gateway-mcp-max-steps');
    expect(openai.requests).toHaveLength(0);
  });

  it('charges and logs every model call on its own', async () => {
    // A key of its own: no earlier request's charge can still be settling into its budget.
    const key = await createVk(gw, {
      provider_configs: [pc('openai')],
      budgets: [{ max_limit: 1000, reset_duration: '1d' }],
      mcp_configs: [{ mcp_client_name: 'files', tools_to_execute: ['read'], tools_to_auto_execute: ['read'] }],
    });
    const { response } = await sdk(key.value)
      .chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: 'charge me twice' }] })
      .withResponse();
    const ids = String(response.headers.get('x-gateway-mcp-step-ids')).split(', ');
    expect(ids).toHaveLength(2);
    expect(ids[0]).toBe(response.headers.get('x-gateway-request-id'));
    const logs = await Promise.all(ids.map((id) => logOf(gw, id)));
    for (const log of logs) {
      expect(log).toMatchObject({ virtual_key_id: key.id, status: 'success', request_type: 'chat_completion' });
      expect(log['cost_nano']).toBeGreaterThan(0);
    }
    // Step 1 answered the tool call, step 2 the text: two different usages.
    expect(logs[0]?.['completion_tokens']).not.toBe(logs[1]?.['completion_tokens']);
    const total = logs.reduce((n, l) => n + Number(l['cost_nano']), 0);
    const usage = async () => budgetsOf(await adminJson(gw, `${VK}/${key.id}`))[0]?.['current_usage'] as number;
    expect(await poll(usage, (u) => Math.abs(u - usd(total)) < 1e-12)).toBeCloseTo(usd(total), 12);
  });
});

describe('a failing later step', () => {
  it('fails the request with that step’s error; the answer still names every step, the first charged', async () => {
    openai.script(
      { status: 200, body: chatCalls([{ name: 'files-read', args: { text: 'a' } }]) },
      { status: 500, body: { error: { message: 'upstream broke', type: 'server_error', param: null, code: null } } },
    );
    const res = await fetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${keyA.value}` },
      body: JSON.stringify({ model: MODEL, messages: [{ role: 'user', content: 'break' }] }),
    });
    expect(res.status).toBe(500);
    expect(files.calls).toHaveLength(1);
    expect(res.headers.get('x-gateway-mcp-steps')).toBe('2');
    const ids = String(res.headers.get('x-gateway-mcp-step-ids')).split(', ');
    expect(ids).toHaveLength(2);
    expect(await logOf(gw, ids[0])).toMatchObject({ status: 'success', virtual_key_id: keyA.id });
    const failed = await logOf(gw, ids[1]);
    expect(failed).toMatchObject({ status: 'error', status_code: 500, virtual_key_id: keyA.id });
    expect((await logOf(gw, ids[0]))['cost_nano']).toBeGreaterThan(0);
  });
});

describe('streams', () => {
  it('carry the injected tools; the model’s calls stream back to the caller, nothing is auto-executed', async () => {
    const stream = await sdk(keyA.value).chat.completions.create({
      model: MODEL,
      messages: [{ role: 'user', content: 'stream it' }],
      stream: true,
    });
    const names: string[] = [];
    for await (const chunk of stream) {
      for (const c of chunk.choices[0]?.delta.tool_calls ?? []) if (c.function?.name) names.push(c.function.name);
    }
    expect(names).toEqual(['files-read']);
    expect(toolNames(body(0))).toEqual(['files-read', 'files-write', 'files-fail']);
    expect(openai.requests).toHaveLength(1);
    expect(files.calls).toHaveLength(0);
  });
});

describe('the Anthropic Messages format', () => {
  const client = () => new Anthropic({ baseURL: `${gw.url}/anthropic`, apiKey: keyA.value, maxRetries: 0 });
  const text = (m: Anthropic.Message) => m.content.map((b) => (b.type === 'text' ? b.text : '')).join('');

  it('native (anthropic): tools as input_schema tools, tool_use run, tool_result sent back', async () => {
    const m = await client().messages.create({
      model: 'claude-sonnet-4-5',
      max_tokens: 100,
      messages: [{ role: 'user', content: 'look it up' }],
    });
    const sent = (i: number): Json => anthropic.requests[i]?.json as Json; // the fake records parsed JSON bodies
    const first = sent(0);
    expect((first['tools'] as Json[]).map((t) => t['name'])).toEqual(['files-read', 'files-write', 'files-fail']);
    expect((first['tools'] as Json[])[0]).toEqual({
      name: 'files-read',
      description: 'echoes its arguments (read)',
      input_schema: { type: 'object', properties: { text: { type: 'string' } } },
    });
    // The fake calls the first tool with a sample of its schema; the gateway ran it.
    expect(files.calls).toEqual([expect.objectContaining({ tool: 'read', args: { text: 'fake' } })]);
    expect(anthropic.requests).toHaveLength(2);
    const messages = sent(1)['messages'] as Json[];
    expect(messages.map((x) => x['role'])).toEqual(['user', 'assistant', 'user']);
    const use = (messages[1]?.['content'] as Json[] | undefined)?.find((b) => b['type'] === 'tool_use');
    expect(messages[2]?.['content']).toEqual([
      { type: 'tool_result', tool_use_id: use?.['id'], content: 'read:{"text":"fake"}' },
    ]);
    expect(text(m)).toBe('tool result: read:{"text":"fake"}');
  });

  it('translated (<provider>/<model> on /anthropic): the loop runs through the chat translation', async () => {
    const m = await client().messages.create({
      model: 'openai/gpt-4o-mini',
      max_tokens: 100,
      messages: [{ role: 'user', content: 'translate me' }],
    });
    expect(files.calls).toEqual([expect.objectContaining({ tool: 'read', args: { query: 'translate me' } })]);
    expect(openai.requests).toHaveLength(2);
    expect((body(1)['messages'] as Json[]).at(-1)).toMatchObject({
      role: 'tool',
      content: 'read:{"query":"translate me"}',
    });
    expect(text(m)).toBe('Echo from gpt-4o-mini: translate me');
  });
});

describe('the Gemini API format', () => {
  const client = () => new GoogleGenAI({ apiKey: keyA.value, httpOptions: { baseUrl: `${gw.url}/genai` } });
  const sent = (i: number): Json => gemini.requests[i]?.json as Json; // the fake records parsed JSON bodies

  it('generateContent: declarations injected, functionCall run, functionResponse sent back', async () => {
    const r = await client().models.generateContent({ model: 'gemini-2.5-flash', contents: 'look it up' });
    const decls = ((sent(0)['tools'] as Json[] | undefined)?.[0]?.['functionDeclarations'] ?? []) as Json[];
    expect(decls.map((d) => d['name'])).toEqual(['files-read', 'files-write', 'files-fail']);
    expect(decls[0]).toEqual({
      name: 'files-read',
      description: 'echoes its arguments (read)',
      parametersJsonSchema: { type: 'object', properties: { text: { type: 'string' } } },
    });
    expect(files.calls).toEqual([expect.objectContaining({ tool: 'read', args: { text: 'look it up' } })]);
    expect(gemini.requests).toHaveLength(2);
    const contents = sent(1)['contents'] as Json[];
    expect(contents.slice(1)).toEqual([
      {
        role: 'model',
        parts: [
          {
            functionCall: { name: 'files-read', args: { text: 'look it up' } },
            thoughtSignature: 'c2lnbmF0dXJlLTE=',
          },
        ],
      },
      {
        role: 'user',
        parts: [{ functionResponse: { name: 'files-read', response: { result: 'read:{"text":"look it up"}' } } }],
      },
    ]);
    expect(r.text).toBe('tool said: [{"result":"read:{\\"text\\":\\"look it up\\"}"}]');
  });

  it('embedContent on the same route gets no tools and no loop', async () => {
    const r = await client().models.embedContent({ model: 'text-embedding-004', contents: 'hello' });
    expect(r.embeddings?.[0]?.values?.length).toBeGreaterThan(0);
    expect(sent(0)['tools']).toBeUndefined();
  });
});

describe('the Bedrock Converse format', () => {
  it('translated (<provider>/<model> on /cloudconv): toolSpec tools, the loop through the chat translation', async () => {
    const client = new BedrockRuntimeClient({
      endpoint: `${gw.url}/cloudconv`,
      region: 'us-east-1',
      token: { token: keyA.value },
      authSchemePreference: ['httpBearerAuth'],
      requestHandler: new NodeHttpHandler(),
      maxAttempts: 1,
    });
    const r = await client.send(
      new ConverseCommand({
        modelId: 'openai/gpt-4o-mini',
        messages: [{ role: 'user', content: [{ text: 'converse with tools' }] }],
      }),
    );
    expect(toolNames(body(0))).toEqual(['files-read', 'files-write', 'files-fail']);
    expect(files.calls).toEqual([expect.objectContaining({ tool: 'read', args: { query: 'converse with tools' } })]);
    expect(openai.requests).toHaveLength(2);
    expect((body(1)['messages'] as Json[]).at(-1)).toMatchObject({
      role: 'tool',
      content: 'read:{"query":"converse with tools"}',
    });
    expect(r.output?.message?.content?.map((b) => b.text ?? '').join('')).toBe(
      'Echo from gpt-4o-mini: converse with tools',
    );
  });
});

describe('the Cohere v2 chat format', () => {
  it('translated (<provider>/<model> on /cohere): function tools, the loop through the chat translation', async () => {
    const client = new CohereClientV2({ token: keyA.value, environment: `${gw.url}/cohere`, maxRetries: 0 });
    const r = await client.chat({
      model: 'openai/gpt-4o-mini',
      messages: [{ role: 'user', content: 'cohere with tools' }],
    });
    expect(toolNames(body(0))).toEqual(['files-read', 'files-write', 'files-fail']);
    expect(files.calls).toEqual([expect.objectContaining({ tool: 'read', args: { query: 'cohere with tools' } })]);
    expect(openai.requests).toHaveLength(2);
    expect((body(1)['messages'] as Json[]).at(-1)).toMatchObject({
      role: 'tool',
      content: 'read:{"query":"cohere with tools"}',
    });
    const text = (r.message.content ?? []).map((c) => (c.type === 'text' ? c.text : '')).join('');
    expect(text).toBe('Echo from gpt-4o-mini: cohere with tools');
  });
});
