// MCP tool injection and the auto-execute loop on a real gateway (Postgres + Redis), OpenAI's formats: MCP SDK
// tool servers as the upstream tool servers (created through /api/mcp/client), a fake OpenAI upstream as the
// model, the official openai SDK as the caller with a virtual key. What the upstream receives (the key's tools,
// nothing else), the loop for chat and Responses (the second model call carries the tool result), calls that go
// back to the caller, the bound, streams, and every step charged to the key and logged. The other formats
// (Anthropic, Gemini, Bedrock, Cohere): mcp-injection-formats.test.ts.
import OpenAI from 'openai';
import { describe, expect, it } from 'vitest';
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
import { chatCalls } from './mcp-helpers.ts';
import { MODEL, toolNames, useInjectionEnv } from './mcp-injection-helpers.ts';

const env = useInjectionEnv();

const body = (i: number): Json => env.openai.requests[i]?.json as Json; // the fake records parsed JSON bodies

function sdk(key: string, headers: Record<string, string> = {}): OpenAI {
  return new OpenAI({ baseURL: `${env.gw.url}/v1`, apiKey: key, maxRetries: 0, defaultHeaders: headers });
}

type SdkToolCall = OpenAI.Chat.Completions.ChatCompletionMessageToolCall;
const fnName = (c: SdkToolCall): string | undefined => (c.type === 'function' ? c.function.name : undefined);
const fnArgs = (c: SdkToolCall | undefined): string | undefined =>
  c?.type === 'function' ? c.function.arguments : undefined;

describe('tool injection', () => {
  it('gives the upstream exactly the key’s allowed tools with their descriptions and schemas', async () => {
    const r = await sdk(env.keyA.value).chat.completions.create({
      model: MODEL,
      messages: [{ role: 'user', content: 'hi' }],
      tool_choice: 'none',
    });
    expect(r.choices[0]?.message.content).toContain('Echo from gpt-4o-mini');
    expect(env.openai.requests).toHaveLength(1);
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
    await sdk(env.keyB.value).chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: 'hi' }] });
    expect(body(0)['tools']).toBeUndefined();
    expect(env.files.calls).toHaveLength(0);
  });

  it('keeps the caller’s own tool of the same name, whose call goes back to the caller', async () => {
    const r = await sdk(env.keyA.value).chat.completions.create({
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
    expect(env.openai.requests).toHaveLength(1);
    expect(env.files.calls).toHaveLength(0);
  });

  it('injects on /compat-a too (OpenAI’s own paths, a bare model)', async () => {
    const compat = new OpenAI({ baseURL: `${env.gw.url}/compat-a/v1`, apiKey: env.keyA.value, maxRetries: 0 });
    await compat.chat.completions.create({
      model: 'gpt-4o-mini',
      messages: [{ role: 'user', content: 'hi' }],
      tool_choice: 'none',
    });
    expect(toolNames(body(0))).toEqual(['files-read', 'files-write', 'files-fail']);
  });

  it('injects into Responses requests as non-strict function tools', async () => {
    await sdk(env.keyA.value).responses.create({ model: MODEL, input: 'hi' });
    expect(toolNames(body(0))).toEqual(['files-read', 'files-write', 'files-fail']);
    expect((body(0)['tools'] as Json[])[0]).toMatchObject({ type: 'function', name: 'files-read', strict: false });
  });
});

describe('auto-execution', () => {
  it('chat: runs the tool, calls the model again with its result, answers the final text', async () => {
    const { data, response } = await sdk(env.keyA.value)
      .chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: 'look it up' }] })
      .withResponse();
    // The fake called files-read with {query: <last user text>}; the gateway ran it.
    expect(env.files.calls).toEqual([expect.objectContaining({ tool: 'read', args: { query: 'look it up' } })]);
    expect(env.openai.requests).toHaveLength(2);
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
    // The model's function_call, which the second request must carry back as it was.
    const call = {
      type: 'function_call',
      id: 'fc_1',
      call_id: 'call_r1',
      name: 'files-read',
      arguments: '{"text":"notes"}',
      status: 'completed',
    };
    env.openai.script({
      pathIncludes: '/responses',
      status: 200,
      body: {
        id: 'resp_scripted',
        object: 'response',
        created_at: 1_700_000_000,
        status: 'completed',
        model: 'gpt-4o-mini',
        output: [call],
        usage: {
          input_tokens: 5,
          output_tokens: 3,
          total_tokens: 8,
          input_tokens_details: { cached_tokens: 0 },
          output_tokens_details: { reasoning_tokens: 0 },
        },
      },
    });
    const r = await sdk(env.keyA.value).responses.create({ model: MODEL, input: 'read my notes' });
    expect(env.files.calls).toEqual([expect.objectContaining({ tool: 'read', args: { text: 'notes' } })]);
    expect(env.openai.requests).toHaveLength(2);
    expect(body(1)['input']).toEqual([
      { role: 'user', content: 'read my notes' },
      call,
      { type: 'function_call_output', call_id: 'call_r1', output: 'read:{"text":"notes"}' },
    ]);
    expect(r.output_text).toBe('Echo from gpt-4o-mini: read my notes');
  });

  it('a call to a tool the key may run but not auto-execute comes back to the caller as is', async () => {
    env.openai.script({
      status: 200,
      body: chatCalls([{ name: 'files-read' }, { name: 'files-write', args: { text: 'x' } }]),
    });
    const r = await sdk(env.keyA.value).chat.completions.create({
      model: MODEL,
      messages: [{ role: 'user', content: 'write it' }],
    });
    expect(r.choices[0]?.finish_reason).toBe('tool_calls');
    expect(r.choices[0]?.message.tool_calls?.map(fnName)).toEqual(['files-read', 'files-write']);
    expect(env.openai.requests).toHaveLength(1);
    expect(env.files.calls).toHaveLength(0);
  });

  it('a tool error reaches the model as the tool’s result, not as an HTTP error', async () => {
    env.openai.script({ status: 200, body: chatCalls([{ name: 'files-fail' }]) });
    const r = await sdk(env.keyA.value).chat.completions.create({
      model: MODEL,
      messages: [{ role: 'user', content: 'try it' }],
    });
    expect(r.choices[0]?.message.content).toBe('Echo from gpt-4o-mini: try it');
    const messages = body(1)['messages'] as Json[];
    expect(messages.at(-1)).toMatchObject({ role: 'tool', content: 'disk on fire' });
  });

  it('stops at the bound: the last answer with its calls, and a header saying so', async () => {
    env.openai.script(
      { status: 200, body: chatCalls([{ name: 'files-read', args: { text: '1' } }]) },
      { status: 200, body: chatCalls([{ name: 'files-read', args: { text: '2' } }]) },
      { status: 200, body: chatCalls([{ name: 'files-read', args: { text: '3' } }]) },
    );
    const { data, response } = await sdk(env.keyA.value, { 'x-gateway-mcp-max-steps': '2' })
      .chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: 'loop' }] })
      .withResponse();
    expect(env.openai.requests).toHaveLength(2);
    expect(env.files.calls.map((c) => c.args)).toEqual([{ text: '1' }]);
    expect(fnArgs(data.choices[0]?.message.tool_calls?.[0])).toBe('{"text":"2"}');
    expect(response.headers.get('x-gateway-mcp-steps')).toBe('2');
    expect(response.headers.get('x-gateway-mcp-max-steps-reached')).toBe('true');
  });

  it('the default bound is 10 model calls', async () => {
    env.openai.script(
      ...Array.from({ length: 12 }, () => ({ status: 200, body: chatCalls([{ name: 'files-read' }]) })),
    );
    const { response } = await sdk(env.keyA.value)
      .chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: 'loop' }] })
      .withResponse();
    expect(env.openai.requests).toHaveLength(10);
    expect(env.files.calls).toHaveLength(9);
    expect(response.headers.get('x-gateway-mcp-max-steps-reached')).toBe('true');
  });

  it('refuses a bad x-gateway-mcp-max-steps with a 400 naming it, before any model call', async () => {
    const err = await sdk(env.keyA.value, { 'x-gateway-mcp-max-steps': 'lots' })
      .chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: 'hi' }] })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    expect((err as InstanceType<typeof OpenAI.BadRequestError>).message).toContain('x-gateway-mcp-max-steps');
    expect(env.openai.requests).toHaveLength(0);
  });

  it('charges and logs every model call on its own', async () => {
    // A key of its own: no earlier request's charge can still be settling into its budget.
    const key = await createVk(env.gw, {
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
    const logs = await Promise.all(ids.map((id) => logOf(env.gw, id)));
    for (const log of logs) {
      expect(log).toMatchObject({ virtual_key_id: key.id, status: 'success', request_type: 'chat_completion' });
      expect(log['cost_nano']).toBeGreaterThan(0);
    }
    // Step 1 answered the tool call, step 2 the text: two different usages.
    expect(logs[0]?.['completion_tokens']).not.toBe(logs[1]?.['completion_tokens']);
    const total = logs.reduce((n, l) => n + Number(l['cost_nano']), 0);
    const usage = async () => budgetsOf(await adminJson(env.gw, `${VK}/${key.id}`))[0]?.['current_usage'] as number;
    expect(await poll(usage, (u) => Math.abs(u - usd(total)) < 1e-12)).toBeCloseTo(usd(total), 12);
  });
});

describe('a failing later step', () => {
  it('fails the request with that step’s error; the answer still names every step, the first charged', async () => {
    env.openai.script(
      { status: 200, body: chatCalls([{ name: 'files-read', args: { text: 'a' } }]) },
      { status: 500, body: { error: { message: 'upstream broke', type: 'server_error', param: null, code: null } } },
    );
    const res = await fetch(`${env.gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${env.keyA.value}` },
      body: JSON.stringify({ model: MODEL, messages: [{ role: 'user', content: 'break' }] }),
    });
    expect(res.status).toBe(500);
    expect(env.files.calls).toHaveLength(1);
    expect(res.headers.get('x-gateway-mcp-steps')).toBe('2');
    const ids = String(res.headers.get('x-gateway-mcp-step-ids')).split(', ');
    expect(ids).toHaveLength(2);
    expect(await logOf(env.gw, ids[0])).toMatchObject({ status: 'success', virtual_key_id: env.keyA.id });
    const failed = await logOf(env.gw, ids[1]);
    expect(failed).toMatchObject({ status: 'error', status_code: 500, virtual_key_id: env.keyA.id });
    expect((await logOf(env.gw, ids[0]))['cost_nano']).toBeGreaterThan(0);
  });
});

describe('streams', () => {
  it('carry the injected tools; the model’s calls stream back to the caller, nothing is auto-executed', async () => {
    const stream = await sdk(env.keyA.value).chat.completions.create({
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
    expect(env.openai.requests).toHaveLength(1);
    expect(env.files.calls).toHaveLength(0);
  });
});
