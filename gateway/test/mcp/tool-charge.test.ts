// What an MCP tool call is charged, pure: a virtual key pays a priced tool's price in nano-USD; the admin key, an
// unpriced or free tool, and a failed call pay nothing; refusals are logged as the gateway's. The budgets end to
// end: test/e2e/mcp-tool-charges.test.ts.
import { describe, expect, it } from 'vitest';
import { GatewayError } from '../../src/http/errors.ts';
import { chargeablePrice, refusalOutcome } from '../../src/mcp/tool-charge.ts';
import { startToolCall, succeeded, type ToolCallOutcome, toolPriceNano } from '../../src/mcp/tool-log.ts';
import type { McpClientRecord } from '../../src/mcp/types.ts';

const client = {
  id: 'c1',
  name: 'files',
  tool_pricing: { read: 0.25, cheap: 0.000000001, free: 0 },
} as unknown as McpClientRecord; // the price reads only tool_pricing

type Caller = Parameters<typeof startToolCall>[1]['principal'];
const key = { kind: 'virtual_key', vk: { id: 'vk1', name: 'k' } } as Caller; // only the kind is read
const admin = { kind: 'admin', name: 'admin' } as Caller;

const call = (tool: string, principal: Caller) =>
  startToolCall(0, { llmRequestId: null, principal, client, tool, args: {} });

describe('chargeablePrice', () => {
  it('is the tool’s price in nano-USD for a virtual key', () => {
    expect(chargeablePrice(call('read', key))).toBe(250_000_000);
    expect(chargeablePrice(call('cheap', key))).toBe(1);
  });

  it('is nothing for the admin key, an unpriced tool, a free tool or an inherited property name', () => {
    expect(chargeablePrice(call('read', admin))).toBeUndefined();
    expect(chargeablePrice(call('read', null))).toBeUndefined();
    expect(chargeablePrice(call('write', key))).toBeUndefined();
    expect(chargeablePrice(call('free', key))).toBeUndefined();
    expect(chargeablePrice(call('constructor', key))).toBeUndefined();
    expect(toolPriceNano(client, 'free')).toBe(0);
  });
});

describe('succeeded', () => {
  it('is a result without isError, as the tool log counts success', () => {
    const ok: ToolCallOutcome = { kind: 'result', result: { content: [] } };
    expect(succeeded(ok)).toBe(true);
    expect(succeeded({ kind: 'result', result: { content: [], isError: true } })).toBe(false);
    expect(succeeded({ kind: 'failed', type: 'upstream_error', code: 'mcp_tool_call_failed', message: 'x' })).toBe(
      false,
    );
  });
});

describe('refusalOutcome', () => {
  it('logs a budget refusal and an unreachable counter as the gateway’s failures', () => {
    expect(refusalOutcome(new GatewayError('budget_exceeded', 'budget b1 would be exceeded'))).toEqual({
      kind: 'failed',
      type: 'budget_exceeded',
      code: 'budget_exceeded',
      message: 'budget b1 would be exceeded',
    });
    expect(refusalOutcome(new GatewayError('coordination_unavailable', 'retry'))).toMatchObject({
      type: 'service_unavailable',
      code: 'coordination_unavailable',
    });
  });
});
