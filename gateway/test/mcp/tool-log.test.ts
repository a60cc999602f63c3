// The MCP tool-log row of one call, pure: attribution, status, the price, the content switch, bounds, what an
// authorization failure may say, and that recording never throws into the tool call.
import { describe, expect, it } from 'vitest';
import {
  authFailure,
  MAX_LOGGED_TOOL_CONTENT_CHARS,
  recordToolCall,
  startToolCall,
  type ToolCallOutcome,
  type ToolLogSink,
  toolLogEntry,
  upstreamFailure,
} from '../../src/mcp/tool-log.ts';
import { McpAuthError, type McpClientRecord } from '../../src/mcp/types.ts';
import type { McpToolLog } from '../../src/state/services/mcp-log-rows.ts';

const client = {
  id: 'c1',
  name: 'files',
  tool_pricing: { read: 0.002 },
} as unknown as McpClientRecord; // the row reads only id, name and tool_pricing

const principal = { kind: 'virtual_key', vk: { id: 'vk1', name: 'team-a' } } as Parameters<
  typeof startToolCall
>[1]['principal']; // the row reads only the key's id and name

const start = (tool = 'read', args: Record<string, unknown> | undefined = { text: 'hi' }) =>
  startToolCall(1_000, { llmRequestId: 'req-1', principal, client, tool, args });

const ok: ToolCallOutcome = { kind: 'result', result: { content: [{ type: 'text', text: 'done' }] } };

describe('toolLogEntry', () => {
  it('attributes the call and prices a successful one with the client’s tool_pricing', () => {
    const s = start();
    expect(toolLogEntry(s, ok, 1_025, true)).toEqual({
      id: s.id,
      created_at: 1_000,
      llm_request_id: 'req-1',
      tool_name: 'read',
      server_label: 'files',
      virtual_key_id: 'vk1',
      virtual_key_name: 'team-a',
      arguments: '{"text":"hi"}',
      result: '{"content":[{"type":"text","text":"done"}]}',
      error: null,
      status: 'success',
      latency_ms: 25,
      cost_nano: 2_000_000,
      metadata: null,
    });
  });

  it('does not price a failed call or a tool without a price', () => {
    expect(toolLogEntry(start(), upstreamFailure('refused'), 1_001, true)).toMatchObject({
      status: 'error',
      cost_nano: null,
      result: null,
      error: { is_gateway_error: false, error: { type: 'upstream_error', code: 'mcp_tool_call_failed' } },
    });
    expect(toolLogEntry(start('write'), ok, 1_001, true).cost_nano).toBeNull();
  });

  it('keeps arguments, results and the tool’s own error text out while content logging is off', () => {
    const toolError: ToolCallOutcome = {
      kind: 'result',
      result: { content: [{ type: 'text', text: 'secret' }], isError: true },
    };
    const row = toolLogEntry(start('read', { password: 'x' }), toolError, 1_002, false);
    expect(row).toMatchObject({ arguments: null, result: null, status: 'error', cost_nano: null });
    expect(JSON.stringify(row)).not.toMatch(/secret|password/);
    expect(toolLogEntry(start('read', { a: 1 }), toolError, 1_002, true).error).toEqual({
      is_gateway_error: false,
      error: { type: 'tool_error', code: 'tool_error', message: 'secret' },
    });
  });

  it('stores large arguments as their length only', () => {
    const row = toolLogEntry(start('read', { text: 'x'.repeat(MAX_LOGGED_TOOL_CONTENT_CHARS) }), ok, 1_001, true);
    expect(JSON.parse(String(row.arguments))).toEqual({
      omitted: 'too_large',
      chars: MAX_LOGGED_TOOL_CONTENT_CHARS + 11,
    });
  });

  it('leaves a per-user consent link out of the row (it completes someone’s consent)', () => {
    const url = 'https://gw.example/api/oauth/consent/puf_abcdefghijklmnopqrstuvwxyz012345';
    const out = authFailure(new McpAuthError('oauth_authorization_required', `authorize first: ${url}`, url));
    expect(out).toEqual({
      kind: 'failed',
      type: 'permission_error',
      code: 'oauth_authorization_required',
      message: 'authorize first: [consent link]',
    });
  });
});

describe('recordToolCall', () => {
  it('writes per the sink’s mode and never throws into the call', () => {
    const pushed: McpToolLog[] = [];
    const sink = (mode: ReturnType<ToolLogSink['mode']>): ToolLogSink => ({
      mode: () => mode,
      push: (e) => pushed.push(e),
    });
    recordToolCall(sink('off'), start(), ok, 1_001);
    expect(pushed).toHaveLength(0);
    recordToolCall(sink('metadata'), start(), ok, 1_001);
    expect(pushed[0]).toMatchObject({ arguments: null, status: 'success' });
    recordToolCall(sink('content'), start(), ok, 1_001);
    expect(pushed[1]?.arguments).toBe('{"text":"hi"}');
    const broken: ToolLogSink = {
      mode: () => 'content',
      push: () => {
        throw new Error('queue gone');
      },
    };
    expect(() => recordToolCall(broken, start(), ok, 1_001)).not.toThrow();
    expect(() => recordToolCall(undefined, start(), ok, 1_001)).not.toThrow();
  });
});
