// MCP tool injection's pure parts: the OpenAI tool codecs (chat, Responses), the bounded auto-execute loop with
// an injected model and tool runner, injection's decisions over a snapshot (which tools, the caller's own name
// wins, nothing at all without a virtual key or MCP clients), call resolution and result text.
import { describe, expect, it } from 'vitest';
import { messagesTools } from '../../src/formats/anthropic/tools.ts';
import { cohereChatTools } from '../../src/formats/cohere/tools.ts';
import { converseTools } from '../../src/formats/converse/tools.ts';
import type { GenaiCall } from '../../src/formats/genai/call.ts';
import { genaiTools } from '../../src/formats/genai/tools.ts';
import { chatTools, responsesTools } from '../../src/formats/openai/tools.ts';
import type { ToolCallOut } from '../../src/formats/types.ts';
import type { VirtualKey } from '../../src/governance/model.ts';
import type { Principal } from '../../src/http/auth.ts';
import { parseArguments, resolveTool, resultText } from '../../src/mcp/injection/calls.ts';
import {
  BOUND_REACHED_HEADER,
  type InjectionRuntime,
  injectTools,
  MAX_STEPS,
  maxStepsOf,
  STEP_IDS_HEADER,
  STEPS_HEADER,
  type ToolInjection,
} from '../../src/mcp/injection/index.ts';
import { runToolLoop } from '../../src/mcp/injection/loop.ts';
import { McpAuthError, type McpClientRecord, type McpConnections, type McpTool } from '../../src/mcp/types.ts';
import type { ChatRequest, ChatResponse } from '../../src/schemas/chat.ts';
import type { ResponsesRequest, ResponsesResponse } from '../../src/schemas/responses.ts';

function client(over: Partial<McpClientRecord> = {}): McpClientRecord {
  return {
    id: 'c1',
    name: 'files',
    connection_type: 'http',
    connection_string: 'http://127.0.0.1:1/mcp',
    auth_type: 'none',
    headers: {},
    oauth_config_id: null,
    flow_mode: null,
    tools_to_execute: ['*'],
    tools_to_auto_execute: ['*'],
    tool_pricing: {},
    is_ping_available: true,
    disabled: false,
    ...over,
  };
}

function tool(c: McpClientRecord, name: string): McpTool {
  return {
    clientId: c.id,
    clientName: c.name,
    name,
    qualifiedName: `${c.name}-${name}`,
    description: `${name} things`,
    inputSchema: { type: 'object', properties: { path: { type: 'string' } } },
  };
}

function vk(mcp: VirtualKey['mcp_configs']): VirtualKey {
  return {
    id: 'vk1',
    name: 'tenant',
    is_active: true,
    expires_at_ms: null,
    calendar_aligned: false,
    rate_limit: null,
    allowed_extra_headers: [],
    mcp_configs: mcp,
    team_id: null,
    customer_id: null,
    provider_configs: [],
    budgets: [],
  };
}

function chatAnswer(calls: { id: string; name: string; arguments: string }[], content: string | null = null) {
  const res: ChatResponse = {
    id: 'chatcmpl-1',
    object: 'chat.completion',
    created: 1,
    model: 'm',
    choices: [
      {
        index: 0,
        message: {
          role: 'assistant',
          content,
          ...(calls.length > 0
            ? {
                tool_calls: calls.map((c) => ({
                  id: c.id,
                  type: 'function' as const,
                  function: { name: c.name, arguments: c.arguments },
                })),
              }
            : {}),
        },
        finish_reason: calls.length > 0 ? 'tool_calls' : 'stop',
      },
    ],
  };
  return res;
}

describe('chat tool codec', () => {
  it('appends tools after the caller’s own and reads the declared names', () => {
    const body: ChatRequest = {
      model: 'm',
      messages: [{ role: 'user', content: 'hi' }],
      tools: [{ type: 'function', function: { name: 'mine' } }],
    };
    chatTools.addTools(body, [{ name: 'files-read', description: 'reads', parameters: { type: 'object' } }]);
    expect(body.tools).toEqual([
      { type: 'function', function: { name: 'mine' } },
      { type: 'function', function: { name: 'files-read', description: 'reads', parameters: { type: 'object' } } },
    ]);
    expect([...(chatTools.declared(body) ?? [])]).toEqual(['mine', 'files-read']);
  });

  it('reads the calls of a one-choice answer only', () => {
    const one = chatAnswer([{ id: 'a', name: 'files-read', arguments: '{}' }]);
    expect(chatTools.calls(one)).toEqual([{ id: 'a', name: 'files-read', arguments: '{}' }]);
    expect(chatTools.calls(chatAnswer([], 'done'))).toEqual([]);
    const two = { ...one, choices: [one.choices[0]!, { ...one.choices[0]!, index: 1 }] };
    expect(chatTools.calls(two)).toEqual([]);
  });

  it('appends the assistant turn (without response-only fields) and one tool message per output', () => {
    const body: ChatRequest = { model: 'm', messages: [{ role: 'user', content: 'hi' }] };
    const res = chatAnswer([{ id: 'a', name: 'files-read', arguments: '{"path":"x"}' }]);
    Object.assign(res.choices[0]!.message, { annotations: [] });
    const next = chatTools.next(body, res, [{ id: 'a', name: 'files-read', output: 'contents' }]);
    expect(next.messages).toEqual([
      { role: 'user', content: 'hi' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'a', type: 'function', function: { name: 'files-read', arguments: '{"path":"x"}' } }],
      },
      { role: 'tool', tool_call_id: 'a', content: 'contents' },
    ]);
    expect(body.messages).toHaveLength(1);
  });
});

describe('responses tool codec', () => {
  const fc = { type: 'function_call', id: 'fc_1', call_id: 'call_1', name: 'files-read', arguments: '{"path":"x"}' };
  const res = { id: 'resp_1', object: 'response', created_at: 1, status: 'completed', model: 'm', output: [fc] };

  it('adds non-strict function tools and reads declared function names only', () => {
    const body: ResponsesRequest = {
      model: 'm',
      input: 'hi',
      tools: [{ type: 'web_search' }, { type: 'function', name: 'mine' }],
    };
    responsesTools.addTools(body, [{ name: 'files-read', parameters: { type: 'object' } }]);
    expect(body.tools?.[2]).toEqual({
      type: 'function',
      name: 'files-read',
      parameters: { type: 'object' },
      strict: false,
    });
    expect([...(responsesTools.declared(body) ?? [])]).toEqual(['mine', 'files-read']);
  });

  it('reads function_call items and appends the output items and function_call_output items', () => {
    expect(responsesTools.calls(res as ResponsesResponse)).toEqual([
      { id: 'call_1', name: 'files-read', arguments: '{"path":"x"}' },
    ]);
    const next = responsesTools.next({ model: 'm', input: 'hi', instructions: 'be brief' }, res as ResponsesResponse, [
      { id: 'call_1', name: 'files-read', output: 'contents' },
    ]);
    expect(next).toEqual({
      model: 'm',
      instructions: 'be brief',
      input: [
        { role: 'user', content: 'hi' },
        fc,
        { type: 'function_call_output', call_id: 'call_1', output: 'contents' },
      ],
    });
  });
});

describe('anthropic messages tool codec', () => {
  it('adds input_schema tools, reads tool_use blocks, appends the turn and a user message of tool_results', () => {
    const body = {
      model: 'm',
      max_tokens: 10,
      messages: [{ role: 'user' as const, content: 'hi' }],
      tools: [{ name: 'web_search', type: 'web_search_20250305' }],
    };
    messagesTools.addTools(body, [{ name: 'files-read', description: 'reads', parameters: { type: 'object' } }]);
    expect(body.tools[1]).toEqual({ name: 'files-read', description: 'reads', input_schema: { type: 'object' } });
    expect([...(messagesTools.declared(body) ?? [])]).toEqual(['web_search', 'files-read']);
    const thinking = { type: 'thinking', thinking: '...', signature: 'sig' };
    const use = { type: 'tool_use', id: 'toolu_1', name: 'files-read', input: { path: 'x' } };
    const res = { id: 'msg_1', type: 'message', role: 'assistant', content: [thinking, use], stop_reason: 'tool_use' };
    expect(messagesTools.calls(res)).toEqual([{ id: 'toolu_1', name: 'files-read', arguments: '{"path":"x"}' }]);
    expect(messagesTools.calls({ content: [{ type: 'text', text: 'done' }] })).toEqual([]);
    const next = messagesTools.next(body, res, [{ id: 'toolu_1', name: 'files-read', output: 'contents' }]);
    expect(next.messages.slice(1)).toEqual([
      { role: 'assistant', content: [thinking, use] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'contents' }] },
    ]);
  });
});

describe('gemini tool codec', () => {
  it('takes no tools on embedding calls', () => {
    const embed: GenaiCall = { action: 'embedContent', body: { content: { parts: [{ text: 'x' }] } } };
    expect(genaiTools.declared(embed)).toBeUndefined();
  });

  it('extends the caller’s declarations tool, keeps other tools, answers calls in order with their ids', () => {
    const call: GenaiCall = {
      action: 'generateContent',
      sse: false,
      body: {
        contents: [{ role: 'user', parts: [{ text: 'hi' }] }],
        tools: [{ googleSearch: {} }, { functionDeclarations: [{ name: 'mine' }] }],
      },
    };
    genaiTools.addTools(call, [{ name: 'files-read', parameters: { type: 'object' } }]);
    expect(call.action === 'generateContent' && call.body.tools).toEqual([
      { googleSearch: {} },
      { functionDeclarations: [{ name: 'mine' }, { name: 'files-read', parametersJsonSchema: { type: 'object' } }] },
    ]);
    expect([...(genaiTools.declared(call) ?? [])]).toEqual(['mine', 'files-read']);
    const parts = [
      { functionCall: { name: 'files-read', args: { a: 1 } }, thoughtSignature: 'sig' },
      { functionCall: { id: 'fc-2', name: 'files-read' } },
    ];
    const res = { body: { candidates: [{ content: { role: 'model', parts } }] }, usage: undefined };
    expect(genaiTools.calls(res)).toEqual([
      { id: 'call_0', name: 'files-read', arguments: '{"a":1}' },
      { id: 'fc-2', name: 'files-read', arguments: '{}' },
    ]);
    const next = genaiTools.next(call, res, [
      { id: 'call_0', name: 'files-read', output: 'one' },
      { id: 'fc-2', name: 'files-read', output: 'two' },
    ]);
    expect(next.action === 'generateContent' && next.body.contents.slice(1)).toEqual([
      { role: 'model', parts },
      {
        role: 'user',
        parts: [
          { functionResponse: { name: 'files-read', response: { result: 'one' } } },
          { functionResponse: { id: 'fc-2', name: 'files-read', response: { result: 'two' } } },
        ],
      },
    ]);
    const two = { body: { candidates: [{ content: { parts } }, { content: { parts } }] }, usage: undefined };
    expect(genaiTools.calls(two)).toEqual([]);
  });
});

describe('bedrock converse tool codec', () => {
  it('adds toolSpec tools, reads toolUse blocks, appends the message and a user message of toolResults', () => {
    const body = { messages: [{ role: 'user' as const, content: [{ text: 'hi' }] }] };
    converseTools.addTools(body, [{ name: 'files-read', description: '', parameters: { type: 'object' } }]);
    expect(body).toMatchObject({
      toolConfig: { tools: [{ toolSpec: { name: 'files-read', inputSchema: { json: { type: 'object' } } } }] },
    });
    expect([...(converseTools.declared(body) ?? [])]).toEqual(['files-read']);
    const use = { toolUse: { toolUseId: 'tu_1', name: 'files-read', input: { p: 1 } } };
    const res = { output: { message: { role: 'assistant', content: [{ text: 'let me see' }, use] } } };
    expect(converseTools.calls(res)).toEqual([{ id: 'tu_1', name: 'files-read', arguments: '{"p":1}' }]);
    const next = converseTools.next(body, res, [{ id: 'tu_1', name: 'files-read', output: 'contents' }]);
    expect(next.messages?.slice(1)).toEqual([
      { role: 'assistant', content: [{ text: 'let me see' }, use] },
      { role: 'user', content: [{ toolResult: { toolUseId: 'tu_1', content: [{ text: 'contents' }] } }] },
    ]);
  });
});

describe('cohere chat tool codec', () => {
  it('adds function tools, reads message.tool_calls, appends the plan and calls and one tool message per output', () => {
    const body = { model: 'm', messages: [{ role: 'user' as const, content: 'hi' }] };
    cohereChatTools.addTools(body, [{ name: 'files-read', parameters: { type: 'object' } }]);
    expect([...(cohereChatTools.declared(body) ?? [])]).toEqual(['files-read']);
    const call = { id: 'c1', type: 'function', function: { name: 'files-read', arguments: '{}' } };
    const res = { message: { role: 'assistant', tool_plan: 'I will read', tool_calls: [call] } };
    expect(cohereChatTools.calls(res)).toEqual([{ id: 'c1', name: 'files-read', arguments: '{}' }]);
    const next = cohereChatTools.next(body, res, [{ id: 'c1', name: 'files-read', output: 'contents' }]);
    expect(next.messages.slice(1)).toEqual([
      { role: 'assistant', tool_plan: 'I will read', tool_calls: [call] },
      { role: 'tool', tool_call_id: 'c1', content: 'contents' },
    ]);
  });
});

describe('the auto-execute loop', () => {
  const call = (name: string, id = 'a'): ToolCallOut => ({ id, name, arguments: '{}' });

  function script(answers: ChatResponse[]) {
    const bodies: ChatRequest[] = [];
    const executed: string[] = [];
    let i = 0;
    return {
      bodies,
      executed,
      deps: {
        codec: chatTools,
        step: async (b: ChatRequest) => {
          bodies.push(b);
          return { value: answers[i++]! };
        },
        autoExecutable: (c: ToolCallOut) => c.name.startsWith('auto-'),
        execute: async (c: ToolCallOut) => {
          executed.push(c.name);
          return `result of ${c.name}`;
        },
      },
    };
  }

  const start: ChatRequest = { model: 'm', messages: [{ role: 'user', content: 'go' }] };

  it('runs auto-executable calls and calls the model again with their results', async () => {
    const s = script([
      chatAnswer([
        { id: 'a', name: 'auto-x', arguments: '{}' },
        { id: 'b', name: 'auto-y', arguments: '{}' },
      ]),
      chatAnswer([], 'final'),
    ]);
    const r = await runToolLoop(start, { ...s.deps, maxSteps: 10, maxCallsPerStep: 16 });
    expect(r).toMatchObject({ steps: 2, boundReached: false });
    expect(r.last.value.choices[0]?.message.content).toBe('final');
    expect(s.executed).toEqual(['auto-x', 'auto-y']);
    expect(s.bodies[1]?.messages.slice(2)).toEqual([
      { role: 'tool', tool_call_id: 'a', content: 'result of auto-x' },
      { role: 'tool', tool_call_id: 'b', content: 'result of auto-y' },
    ]);
  });

  it('returns the answer as it is when any call is not auto-executable', async () => {
    const s = script([
      chatAnswer([
        { id: 'a', name: 'auto-x', arguments: '{}' },
        { id: 'b', name: 'manual', arguments: '{}' },
      ]),
    ]);
    const r = await runToolLoop(start, { ...s.deps, maxSteps: 10, maxCallsPerStep: 16 });
    expect(r).toMatchObject({ steps: 1, boundReached: false });
    expect(s.executed).toEqual([]);
  });

  it('hands back an answer with more calls than the per-step cap, none executed', async () => {
    const many = Array.from({ length: 3 }, (_, i) => ({ id: `c${i}`, name: 'auto-x', arguments: '{}' }));
    const s = script([chatAnswer(many)]);
    const r = await runToolLoop(start, { ...s.deps, maxSteps: 10, maxCallsPerStep: 2 });
    expect(r).toMatchObject({ steps: 1, boundReached: false });
    expect(s.executed).toEqual([]);
  });

  it('stops at the bound with the last answer’s calls unexecuted', async () => {
    const s = script(Array.from({ length: 5 }, () => chatAnswer([{ ...call('auto-x') }])));
    const r = await runToolLoop(start, { ...s.deps, maxSteps: 3, maxCallsPerStep: 16 });
    expect(r).toMatchObject({ steps: 3, boundReached: true });
    expect(s.executed).toHaveLength(2);
    expect(chatTools.calls(r.last.value)).toHaveLength(1);
  });

  it('a bound of 1 executes nothing', async () => {
    const s = script([chatAnswer([call('auto-x')])]);
    const r = await runToolLoop(start, { ...s.deps, maxSteps: 1, maxCallsPerStep: 16 });
    expect(r).toMatchObject({ steps: 1, boundReached: true });
    expect(s.executed).toEqual([]);
  });
});

describe('x-gateway-mcp-max-steps', () => {
  it('defaults to the ceiling, is capped by it, and refuses anything but a positive integer', () => {
    expect(maxStepsOf(undefined)).toBe(MAX_STEPS);
    expect(maxStepsOf('3')).toBe(3);
    expect(maxStepsOf('50')).toBe(MAX_STEPS);
    for (const bad of ['0', '-1', 'two', '1.5', '']) {
      expect(() => maxStepsOf(bad), bad).toThrow(/x-gateway-mcp-max-steps: expected an integer from 1 to 10/);
    }
  });
});

describe('injection', () => {
  const files = client();
  const web = client({ id: 'c2', name: 'web', tools_to_auto_execute: [] });
  const tools = [tool(files, 'read'), tool(files, 'write'), tool(web, 'search')];
  const calls: { client: string; tool: string; args: unknown; binding: unknown }[] = [];
  const logs: unknown[] = [];

  function runtime(clients: McpClientRecord[], impl?: McpConnections['call']): InjectionRuntime & { listed: number } {
    const rt = {
      listed: 0,
      state: { snapshot: { mcpClients: new Map(clients.map((c) => [c.id, c])) } },
      mcp: {
        connections: {
          tools: () => {
            rt.listed++;
            return tools;
          },
          state: () => ({ state: 'connected' as const }),
          call:
            impl ??
            (async (c, t, args, ctx) => {
              calls.push({ client: c.name, tool: t, args, binding: ctx.binding });
              return { content: [{ type: 'text', text: `${t} ok` }] };
            }),
          reconnect: async () => {},
          close: async () => {},
        },
      },
      logger: { info: (o: unknown) => logs.push(o) },
      now: () => 0,
    };
    return rt as unknown as InjectionRuntime & { listed: number }; // a logger with only `info`, as injection uses
  }

  const key = (mcp: VirtualKey['mcp_configs']): Principal => ({ kind: 'virtual_key', vk: vk(mcp) });
  const allOfFiles = key([{ mcp_client_name: 'files', tools_to_execute: ['*'], tools_to_auto_execute: ['read'] }]);
  const req = (headers: Record<string, string> = {}) => ({ headers });
  const signal = new AbortController().signal;
  const body = (): ChatRequest => ({ model: 'm', messages: [{ role: 'user', content: 'hi' }] });

  /** Runs the loop, gathering the headers it sets (as the route sets them on the reply). */
  async function collect<S extends { value: unknown }>(
    inj: ToolInjection,
    first: unknown,
    id: string,
    call: (b: unknown, id: string) => Promise<S>,
  ): Promise<{ last: S; headers: Record<string, string> }> {
    const headers: Record<string, string> = {};
    const last = await inj.run(first, id, call, (h) => Object.assign(headers, h));
    return { last, headers };
  }

  it('does no work without MCP clients, without a virtual key or without a tool codec', () => {
    const none = runtime([]);
    const b = body();
    expect(injectTools(none, chatTools as never, b, allOfFiles, req(), signal)).toBeUndefined();
    expect(none.listed).toBe(0);
    const some = runtime([files]);
    expect(injectTools(some, chatTools as never, b, { kind: 'admin', name: 'admin' }, req(), signal)).toBeUndefined();
    expect(injectTools(some, undefined, b, allOfFiles, req(), signal)).toBeUndefined();
    expect(some.listed).toBe(0);
    expect(b).toEqual(body());
  });

  it('adds exactly the key’s allowed tools; none for a key without an entry', () => {
    const rt = runtime([files, web]);
    const b = body();
    expect(injectTools(rt, chatTools as never, b, allOfFiles, req(), signal)).toBeDefined();
    expect(b.tools?.map((t) => t.function.name)).toEqual(['files-read', 'files-write']);
    expect(b.tools?.[0]?.function).toEqual({
      name: 'files-read',
      description: 'read things',
      parameters: tools[0]?.inputSchema,
    });
    const other = body();
    const webOnly = key([{ mcp_client_name: 'other', tools_to_execute: ['*'], tools_to_auto_execute: [] }]);
    expect(injectTools(rt, chatTools as never, other, webOnly, req(), signal)).toBeUndefined();
    expect(other).toEqual(body());
  });

  it('keeps the caller’s tool of the same name (and that call is the caller’s to run)', async () => {
    const rt = runtime([files]);
    const b: ChatRequest = { ...body(), tools: [{ type: 'function', function: { name: 'files-read' } }] };
    const inj = injectTools(rt, chatTools as never, b, allOfFiles, req(), signal);
    expect(b.tools?.map((t) => t.function.name)).toEqual(['files-read', 'files-write']);
    expect(b.tools?.[0]?.function.description).toBeUndefined();
    const answer = chatAnswer([{ id: 'a', name: 'files-read', arguments: '{}' }]);
    const out = await collect(inj!, b, 'req-1', async () => ({ value: answer }));
    expect(out.headers).toEqual({ [STEPS_HEADER]: '1', [STEP_IDS_HEADER]: 'req-1' });
  });

  it('runs the loop: auto-executes, hands errors to the model as text, logs each call without arguments', async () => {
    calls.length = 0;
    logs.length = 0;
    const rt = runtime([files]);
    const b = body();
    const inj = injectTools(rt, chatTools as never, b, allOfFiles, req(), signal)!;
    const answers = [
      chatAnswer([
        { id: 'a', name: 'files-read', arguments: '{"path":"/etc"}' },
        { id: 'b', name: 'files-read', arguments: 'not json' },
      ]),
      chatAnswer([], 'done'),
    ];
    const seen: { body: ChatRequest; id: string }[] = [];
    const out = await collect(inj, b, 'req-1', async (stepBody, id) => {
      seen.push({ body: stepBody as ChatRequest, id });
      return { value: answers[seen.length - 1]! };
    });
    expect(out.last.value).toBe(answers[1]);
    expect(seen[0]?.id).toBe('req-1');
    expect(seen[1]?.id).not.toBe('req-1');
    expect(out.headers).toEqual({ [STEPS_HEADER]: '2', [STEP_IDS_HEADER]: `req-1, ${seen[1]?.id}` });
    expect(calls).toEqual([{ client: 'files', tool: 'read', args: { path: '/etc' }, binding: { kind: 'server' } }]);
    expect(seen[1]?.body.messages.slice(2)).toEqual([
      { role: 'tool', tool_call_id: 'a', content: 'read ok' },
      { role: 'tool', tool_call_id: 'b', content: expect.stringMatching(/^Error: arguments: not valid JSON/) },
    ]);
    // The answer's calls run at once: their lines come in completion order.
    expect(logs).toHaveLength(2);
    expect(logs).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          request_id: 'req-1',
          mcp_client: 'files',
          tool: 'read',
          call_id: 'a',
          outcome: 'ok',
        }),
        expect.objectContaining({ call_id: 'b', outcome: 'invalid_arguments' }),
      ]),
    );
    expect(JSON.stringify(logs)).not.toContain('/etc');
  });

  it('a write the key may execute but not auto-execute ends the loop; the bound header is refused early', async () => {
    const rt = runtime([files]);
    const inj = injectTools(rt, chatTools as never, body(), allOfFiles, req(), signal)!;
    const out = await collect(inj, body(), 'r', async () => ({
      value: chatAnswer([{ id: 'a', name: 'files-write', arguments: '{}' }]),
    }));
    expect(out.headers[STEPS_HEADER]).toBe('1');
    expect(() =>
      injectTools(rt, chatTools as never, body(), allOfFiles, req({ 'x-gateway-mcp-max-steps': 'x' }), signal),
    ).toThrow(/x-gateway-mcp-max-steps/);
  });

  it('reports the bound, and turns upstream and auth failures into the model’s text', async () => {
    let n = 0;
    const rt = runtime([files], async () => {
      n++;
      if (n === 1) throw new McpAuthError('oauth_token_expired', 'token expired: delete the config and recreate');
      throw new Error('connect ECONNREFUSED');
    });
    const inj = injectTools(
      rt,
      chatTools as never,
      body(),
      allOfFiles,
      req({ 'x-gateway-mcp-max-steps': '3' }),
      signal,
    )!;
    const bodies: ChatRequest[] = [];
    const out = await collect(inj, body(), 'r', async (b) => {
      bodies.push(b as ChatRequest);
      return { value: chatAnswer([{ id: `c${bodies.length}`, name: 'files-read', arguments: '{}' }]) };
    });
    expect(out.headers[STEPS_HEADER]).toBe('3');
    expect(out.headers[BOUND_REACHED_HEADER]).toBe('true');
    expect(bodies[1]?.messages.at(-1)).toEqual({
      role: 'tool',
      tool_call_id: 'c1',
      content: 'Error: token expired: delete the config and recreate',
    });
    expect(bodies[2]?.messages.at(-1)?.content).toBe('Error: tool call failed: connect ECONNREFUSED');
  });
});

describe('call resolution and results', () => {
  const files = client();
  const clients = new Map([[files.id, files]]);
  const tools = [tool(files, 'read')];
  const connected = () => 'connected' as const;
  const caller = {
    kind: 'virtual_key' as const,
    vk: vk([{ mcp_client_name: 'files', tools_to_execute: ['read'], tools_to_auto_execute: [] }]),
  };

  it('names what is wrong with a tool name', () => {
    expect(resolveTool('files-read', caller, clients, tools, connected)).toMatchObject({ ok: true, tool: 'read' });
    expect(resolveTool('nodash', caller, clients, tools, connected)).toMatchObject({ ok: false, reason: 'malformed' });
    expect(resolveTool('web-x', caller, clients, tools, connected)).toMatchObject({
      ok: false,
      reason: 'unknown_client',
    });
    expect(resolveTool('files-write', caller, clients, tools, connected)).toMatchObject({
      ok: false,
      reason: 'not_allowed',
    });
    expect(resolveTool('files-gone', { kind: 'admin' }, clients, tools, connected)).toMatchObject({
      ok: false,
      reason: 'unknown_tool',
    });
    // Not connected here: the call itself says why.
    expect(resolveTool('files-gone', { kind: 'admin' }, clients, tools, () => 'error')).toMatchObject({ ok: true });
  });

  it('parses arguments as a JSON object', () => {
    expect(parseArguments('{"a":1}')).toEqual({ ok: true, value: { a: 1 } });
    expect(parseArguments('')).toEqual({ ok: true, value: {} });
    expect(parseArguments(undefined)).toEqual({ ok: true, value: {} });
    expect(parseArguments('[1]')).toEqual({ ok: false, message: 'arguments: expected a JSON object' });
    expect(parseArguments('{')).toMatchObject({ ok: false });
  });

  it('turns content blocks into text', () => {
    expect(
      resultText({
        content: [
          { type: 'text', text: 'a' },
          { type: 'text', text: 'b' },
        ],
      }),
    ).toBe('a\nb');
    expect(resultText({ content: [{ type: 'resource', resource: { uri: 'x', text: 'file' } }] })).toBe('file');
    expect(resultText({ content: [{ type: 'image', data: 'AA', mimeType: 'image/png' }] })).toBe(
      '{"type":"image","data":"AA","mimeType":"image/png"}',
    );
    expect(resultText({ content: [], structuredContent: { n: 1 } })).toBe('{"n":1}');
  });
});
