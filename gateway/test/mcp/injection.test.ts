// MCP tool injection's pure parts: the bounded auto-execute loop with an injected model and tool runner,
// injection's decisions over a snapshot (which tools, the caller's own name wins, nothing at all without a virtual
// key or MCP clients), call resolution and result text. The per-format tool codecs: tool-codecs.test.ts.
import { describe, expect, it } from 'vitest';
import { chatTools } from '../../src/formats/openai/tools.ts';
import type { ToolCallOut } from '../../src/formats/types.ts';
import type { VirtualKey } from '../../src/governance/model.ts';
import type { Principal } from '../../src/http/auth.ts';
import { parseArguments, resolveTool, resultText } from '../../src/mcp/injection/calls.ts';
import {
  BOUND_REACHED_HEADER,
  type InjectionRuntime,
  injectTools,
  maxStepsOf,
  STEP_IDS_HEADER,
  STEPS_HEADER,
  type ToolInjection,
} from '../../src/mcp/injection/index.ts';
import { runToolLoop } from '../../src/mcp/injection/loop.ts';
import { McpAuthError, type McpClientRecord, type McpConnections } from '../../src/mcp/types.ts';
import type { ChatRequest, ChatResponse } from '../../src/schemas/chat.ts';
import { chatAnswer, mcpClient as client, mcpTool as tool, virtualKey } from './helpers.ts';

const vk = (mcp: VirtualKey['mcp_configs']): VirtualKey => virtualKey({ mcp_configs: mcp });

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
  it('defaults to mcp_agent_depth, is capped by it, and refuses anything but a positive integer', () => {
    expect(maxStepsOf(undefined, 10)).toBe(10);
    expect(maxStepsOf(undefined, 4)).toBe(4);
    expect(maxStepsOf('3', 10)).toBe(3);
    expect(maxStepsOf('50', 10)).toBe(10);
    expect(maxStepsOf('6', 4)).toBe(4);
    for (const bad of ['0', '-1', 'two', '1.5', '']) {
      expect(() => maxStepsOf(bad, 4), bad).toThrow(/x-gateway-mcp-max-steps: expected an integer from 1 to 4/);
    }
  });
});

describe('injection', () => {
  const files = client();
  const web = client({ id: 'c2', name: 'web', tools_to_auto_execute: [] });
  const tools = [tool(files, 'read'), tool(files, 'write'), tool(web, 'search')];
  const calls: { client: string; tool: string; args: unknown; binding: unknown }[] = [];
  const logs: unknown[] = [];

  function runtime(
    clients: McpClientRecord[],
    impl?: McpConnections['call'],
    depth = 10,
  ): InjectionRuntime & { listed: number } {
    const rt = {
      listed: 0,
      state: {
        snapshot: {
          mcpClients: new Map(clients.map((c) => [c.id, c])),
          client: { mcp_agent_depth: depth, logging_headers: [] },
        },
      },
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

  it('stops at the operator’s mcp_agent_depth, which the per-request header cannot raise', async () => {
    const cases: Record<string, string>[] = [{}, { 'x-gateway-mcp-max-steps': '8' }];
    for (const headers of cases) {
      const rt = runtime([files], undefined, 4);
      const inj = injectTools(rt, chatTools as never, body(), allOfFiles, req(headers), signal)!;
      let n = 0;
      const out = await collect(inj, body(), 'r', async () => {
        n++;
        return { value: chatAnswer([{ id: `c${n}`, name: 'files-read', arguments: '{}' }]) };
      });
      expect(n).toBe(4);
      expect(out.headers[STEPS_HEADER]).toBe('4');
      expect(out.headers[BOUND_REACHED_HEADER]).toBe('true');
    }
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
