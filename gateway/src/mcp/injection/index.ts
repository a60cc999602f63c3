// MCP tool injection into inference: a virtual key's allowed MCP tools join the request's function tools
// (`<client>-<tool>`, the caller's own tool of the same name wins), and on a unary request the calls the model
// makes to auto-executable tools are run by the gateway in a bounded loop (loop.ts), every model call a full
// inference of its own. The inference route calls `injectTools` once per request; with no MCP client in the
// snapshot, or a caller that is not a virtual key, it returns at once and the body is untouched.

import { logMetadata } from '../../config/log-headers.ts';
import type { ToolCallOut, ToolCodec, ToolDefinition } from '../../formats/types.ts';
import type { Principal } from '../../http/auth.ts';
import { GatewayError } from '../../http/errors.ts';
import type { Runtime } from '../../runtime.ts';
import { timeOrderedId } from '../../state/ids.ts';
import { type BindingRequest, resolveBinding } from '../binding.ts';
import { authErrorOf, describeError } from '../connections/errors.ts';
import { allowedTools, mayAutoExecute, type ToolCaller } from '../policy.ts';
import { refusalOutcome, type ToolCharger, type ToolHold, toolCharger } from '../tool-charge.ts';
import { authFailure, recordToolCall, startToolCall, type ToolCallOutcome, upstreamFailure } from '../tool-log.ts';
import type { McpTool } from '../types.ts';
import { parseArguments, resultText } from './calls.ts';
import { runToolLoop } from './loop.ts';

/** An answer asking for more tool calls than this at once is handed back to the caller, not executed. */
export const MAX_CALLS_PER_STEP = 16;
/**
 * A caller may lower the bound for one request (`1`: no auto-execution); the bound itself is the operator's client
 * setting `mcp_agent_depth`, which a caller cannot raise.
 */
export const MAX_STEPS_HEADER = 'x-gateway-mcp-max-steps';
/** Answer headers of a request that went through the loop. */
export const STEPS_HEADER = 'x-gateway-mcp-steps';
export const STEP_IDS_HEADER = 'x-gateway-mcp-step-ids';
export const BOUND_REACHED_HEADER = 'x-gateway-mcp-max-steps-reached';

/**
 * What injection needs: the gateway's Runtime (its MCP connections, the tool log, and the budgets priced calls are
 * paid from). Unit tests pass a narrower fake; a call of an unpriced tool touches nothing but its MCP parts.
 */
export type InjectionRuntime = Runtime;

/** One model call of the loop, under its own request id (its request-log row). */
export type StepCall<S> = (body: unknown, stepId: string) => Promise<S>;

export interface ToolInjection {
  /**
   * Runs the unary request with auto-execution. `setHeaders` gets the answer headers (model calls so far, their
   * log ids) before each model call, so that a request failing in a later step still names the steps charged.
   */
  run<S extends { value: unknown }>(
    body: unknown,
    requestId: string,
    call: StepCall<S>,
    setHeaders: (headers: Record<string, string>) => void,
  ): Promise<S>;
}

/**
 * Adds the caller's MCP tools to `body` (in place). Undefined when nothing was added: no tool codec, not a
 * virtual key, no MCP client, no allowed tool, or every allowed name already declared by the caller.
 */
export function injectTools(
  rt: InjectionRuntime,
  codec: ToolCodec<unknown, unknown> | undefined,
  body: unknown,
  principal: Principal | null,
  request: BindingRequest,
  signal: AbortSignal,
): ToolInjection | undefined {
  if (codec === undefined || principal?.kind !== 'virtual_key') return undefined;
  const clients = rt.state.snapshot.mcpClients;
  if (clients.size === 0) return undefined;
  const declared = codec.declared(body);
  if (declared === undefined) return undefined;
  const caller: ToolCaller = { kind: 'virtual_key', vk: principal.vk };
  const allowed = allowedTools(caller, clients, rt.mcp.connections.tools());
  if (allowed.length === 0) return undefined;
  const added = allowed.filter((t) => !declared.has(t.qualifiedName));
  if (added.length === 0) return undefined;
  const maxSteps = maxStepsOf(request.headers[MAX_STEPS_HEADER], rt.state.snapshot.client.mcp_agent_depth);
  codec.addTools(body, added.map(definition));
  const byName = new Map(added.map((t) => [t.qualifiedName, t]));
  const ctx: CallContext = { rt, caller, principal, request, signal, byName, charges: toolCharger(rt) };
  return {
    async run(first, requestId, call, setHeaders) {
      const ids: string[] = [];
      const result = await runToolLoop(first, {
        codec,
        maxSteps,
        maxCallsPerStep: MAX_CALLS_PER_STEP,
        step: (b, n) => {
          const id = n === 1 ? requestId : timeOrderedId();
          ids.push(id);
          setHeaders({ [STEPS_HEADER]: String(n), [STEP_IDS_HEADER]: ids.join(', ') });
          return call(b, id);
        },
        autoExecutable: (c) => autoExecutable(ctx, c),
        execute: (c, n) => execute(ctx, c, ids[n - 1] ?? requestId),
      });
      if (result.boundReached) setHeaders({ [BOUND_REACHED_HEADER]: 'true' });
      return result.last;
    },
  };
}

function definition(t: McpTool): ToolDefinition {
  return { name: t.qualifiedName, description: t.description, parameters: t.inputSchema };
}

/** The header's bound, capped at `depth` (mcp_agent_depth); anything but a positive integer is refused. */
export function maxStepsOf(value: string | string[] | undefined, depth: number): number {
  if (value === undefined) return depth;
  const text = Array.isArray(value) ? value.join(',') : value;
  if (!/^\s*[0-9]{1,6}\s*$/.test(text) || Number(text) < 1) {
    throw new GatewayError('invalid_request', `${MAX_STEPS_HEADER}: expected an integer from 1 to ${depth}`, {
      param: MAX_STEPS_HEADER,
    });
  }
  return Math.min(Number(text), depth);
}

interface CallContext {
  rt: InjectionRuntime;
  caller: ToolCaller;
  principal: Principal;
  /** The calling request's headers and scheme: whose per-user token a call uses. */
  request: BindingRequest;
  signal: AbortSignal;
  /** The MCP tools this request carries, by the name the model sees. */
  byName: ReadonlyMap<string, McpTool>;
  /** Priced calls are paid from the caller's budgets. */
  charges: ToolCharger;
}

/** Only the MCP tools this request carries (a caller's own tool of the same name is the caller's to run). */
function autoExecutable(ctx: CallContext, call: ToolCallOut): boolean {
  const tool = ctx.byName.get(call.name);
  const client = tool && ctx.rt.state.snapshot.mcpClients.get(tool.clientId);
  return client !== undefined && tool !== undefined && mayAutoExecute(ctx.caller, client, tool.name);
}

/** Runs one call for the model: every failure becomes the text it reads (it may retry or tell the user). */
async function execute(ctx: CallContext, call: ToolCallOut, stepId: string): Promise<string> {
  const { rt } = ctx;
  const tool = ctx.byName.get(call.name);
  const client = tool && rt.state.snapshot.mcpClients.get(tool.clientId);
  const startedAt = rt.now();
  // The log line names the call, never its arguments or result (they may carry the user's data).
  const log = (outcome: string) =>
    rt.logger.info(
      {
        request_id: stepId,
        mcp_client: client?.name ?? null,
        tool: tool?.name ?? call.name,
        call_id: call.id,
        outcome,
        duration_ms: Math.round((rt.now() - startedAt) * 100) / 100,
      },
      'mcp tool executed',
    );
  if (!tool || !client) {
    log('unknown_tool');
    return `Error: tool '${call.name}' is no longer available`;
  }
  const args = parseArguments(call.arguments);
  const start = startToolCall(startedAt, {
    llmRequestId: stepId,
    principal: ctx.principal,
    client,
    tool: tool.name,
    args: args.ok ? args.value : undefined,
    metadata: logMetadata(ctx.request.headers, ctx.rt.state.snapshot.client.logging_headers),
  });
  // The model sees every outcome as the tool's result; the tool log gets the same outcome.
  let hold: ToolHold | undefined;
  const done = (outcome: string, logged: ToolCallOutcome, text: string): string => {
    log(outcome);
    recordToolCall(rt.mcpToolLog, start, logged, rt.now());
    void hold?.end(logged);
    return text;
  };
  if (!args.ok) {
    const failed = {
      kind: 'failed',
      type: 'invalid_request',
      code: 'invalid_arguments',
      message: args.message,
    } as const;
    return done('invalid_arguments', failed, `Error: ${args.message}`);
  }
  const binding = resolveBinding(client, ctx.principal, ctx.request);
  if (!binding.ok) {
    const failed = { kind: 'failed', type: 'invalid_request', code: 'no_binding', message: binding.reason } as const;
    return done('no_binding', failed, `Error: ${binding.reason}`);
  }
  try {
    hold = await ctx.charges.reserve(start);
  } catch (err) {
    // A budget without room for the price: the model reads the refusal as the tool's result (a spent budget then
    // refuses the next priced model call with 402 anyway); the tool server is not called.
    const refused = refusalOutcome(err);
    return done(refused.code, refused, `Error: ${refused.message}`);
  }
  try {
    const result = await rt.mcp.connections.call(client, tool.name, args.value, {
      binding: binding.binding,
      signal: ctx.signal,
    });
    return done(result.isError ? 'tool_error' : 'ok', { kind: 'result', result }, resultText(result));
  } catch (err) {
    // An McpAuthError's message says what to do (delete and recreate, or the consent link to open).
    const auth = authErrorOf(err);
    if (auth) return done(auth.code, authFailure(auth), `Error: ${auth.message}`);
    const message = `tool call failed: ${describeError(err)}`;
    return done('failed', upstreamFailure(message), `Error: ${message}`);
  }
}
