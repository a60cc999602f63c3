// POST /v1/mcp/tool/execute?format=chat|responses: runs one tool call a model made, for callers that run tools
// themselves (a call the gateway did not auto-execute). The body is the call in the format's own shape (a chat
// `tool_calls[]` entry, or a Responses `function_call` item), the answer the message to send back to the model.
// A virtual key's mcp_configs decide what it may run; the admin key may run every tool within the clients'
// ceilings; other callers are refused.

import type { FastifyInstance, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { formatIssues } from '../../config/issues.ts';
import { logMetadata } from '../../config/log-headers.ts';
import { GatewayError } from '../../http/errors.ts';
import { documented } from '../../http/openapi.ts';
import { resolveBinding } from '../../mcp/binding.ts';
import { authErrorOf, describeError } from '../../mcp/connections/errors.ts';
import { parseArguments, resolveTool, resultText } from '../../mcp/injection/calls.ts';
import type { ToolCaller } from '../../mcp/policy.ts';
import { toolCharger } from '../../mcp/tool-charge.ts';
import {
  authFailure,
  recordToolCall,
  startToolCall,
  type ToolCallOutcome,
  upstreamFailure,
} from '../../mcp/tool-log.ts';
import { ProviderError } from '../../providers/errors.ts';
import type { Runtime } from '../../runtime.ts';

const ChatToolCall = z.looseObject({
  id: z.string().optional(),
  type: z.literal('function').optional(),
  function: z.looseObject({
    name: z.string().min(1).describe('`<client>-<tool>`'),
    arguments: z.string().optional().describe('The arguments as a JSON text (an object)'),
  }),
});
const ResponsesToolCall = z.looseObject({
  call_id: z.string().optional(),
  name: z.string().min(1).describe('`<client>-<tool>`'),
  arguments: z.string().optional().describe('The arguments as a JSON text (an object)'),
});
const ExecuteToolQuery = z.object({
  format: z.enum(['chat', 'responses']).default('chat').describe('The shape of the body and of the answer'),
});

const ChatToolMessage = z.object({
  role: z.literal('tool'),
  tool_call_id: z.string().optional(),
  name: z.string(),
  content: z.string(),
  is_error: z.literal(true).optional().describe('Present when the tool reported an error (the content says which)'),
});
const ResponsesToolOutput = z.object({
  id: z.string(),
  type: z.literal('function_call_output'),
  status: z.enum(['completed', 'incomplete']),
  role: z.literal('assistant'),
  call_id: z.string().optional(),
  name: z.string(),
  arguments: z.string(),
  output: z.string().describe('The result text (what OpenAI’s `function_call_output` input item takes)'),
  content: z.string().describe('The same text'),
  error: z.string().optional(),
  is_error: z.literal(true).optional(),
});

/** The call, whatever the format. */
interface Call {
  id: string | undefined;
  name: string;
  arguments: string | undefined;
  /** Where the arguments are in the body, for error messages. */
  argumentsField: string;
}

function decode(format: 'chat' | 'responses', body: unknown): Call {
  if (format === 'chat') {
    const r = ChatToolCall.safeParse(body);
    if (!r.success) throw new GatewayError('invalid_request', formatIssues(r.error));
    const f = r.data.function;
    return { id: r.data.id, name: f.name, arguments: f.arguments, argumentsField: 'function.arguments' };
  }
  const r = ResponsesToolCall.safeParse(body);
  if (!r.success) throw new GatewayError('invalid_request', formatIssues(r.error));
  return { id: r.data.call_id, name: r.data.name, arguments: r.data.arguments, argumentsField: 'arguments' };
}

function callerOf(request: FastifyRequest): ToolCaller {
  const p = request.principal;
  if (p?.kind === 'virtual_key') return { kind: 'virtual_key', vk: p.vk };
  if (p?.kind === 'admin') return { kind: 'admin' };
  throw new GatewayError(
    'permission_denied',
    'executing MCP tools needs a virtual key (its mcp_configs decide which tools) or the admin API key',
  );
}

const STATUS_OF = { malformed: 'invalid_request', unknown_client: 'not_found', unknown_tool: 'not_found' } as const;

export function registerToolExecuteRoute(app: FastifyInstance, rt: Runtime): void {
  app.post(
    '/mcp/tool/execute',
    documented('MCP')({
      operationId: 'executeMCPTool',
      summary: 'Execute an MCP tool call',
      description:
        'Runs one tool call (`<client>-<tool>`) a model made and answers the message that carries its result ' +
        'back to the model: `format=chat` (default) takes a chat `tool_calls[]` entry and answers a `role: tool` ' +
        'message; `format=responses` takes a `function_call` item and answers a `function_call_output`. A virtual ' +
        'key runs what its `mcp_configs` allow; the admin key runs every tool within the clients’ own lists. A ' +
        'tool that reports an error is still a 200 (`is_error: true`); an unreachable tool server is a 502; a ' +
        'missing or expired OAuth authorization is a 403 whose message says what to do. A tool with a price ' +
        '(the client’s `tool_pricing`) called by a virtual key is paid from the budgets of the key, its team and ' +
        'its customer when it succeeds; a budget without room for the price refuses the call with 402.',
      querystring: ExecuteToolQuery,
      body: z.union([ChatToolCall, ResponsesToolCall]),
      bodyExamples: [
        { id: 'call_123', type: 'function', function: { name: 'weather-get_weather', arguments: '{"city":"Paris"}' } },
        { call_id: 'call_123', name: 'weather-get_weather', arguments: '{"city":"Paris"}' },
      ],
      responses: {
        200: {
          description: 'The tool’s result as a chat tool message or a Responses output item',
          json: z.union([ChatToolMessage, ResponsesToolOutput]),
        },
      },
      errors: [402, 403, 404, 502, 503],
    }),
    async (request, reply) => {
      const query = ExecuteToolQuery.safeParse(request.query ?? {});
      if (!query.success) throw new GatewayError('invalid_request', formatIssues(query.error), { param: 'format' });
      const format = query.data.format;
      const caller = callerOf(request);
      const call = decode(format, request.body);
      const { connections } = rt.mcp;
      const resolved = resolveTool(
        call.name,
        caller,
        rt.state.snapshot.mcpClients,
        connections.tools(),
        (id) => connections.state(id).state,
      );
      if (!resolved.ok) {
        const code = resolved.reason === 'not_allowed' ? 'permission_denied' : STATUS_OF[resolved.reason];
        throw new GatewayError(code, resolved.message, { param: format === 'chat' ? 'function.name' : 'name' });
      }
      const args = parseArguments(call.arguments);
      if (!args.ok) throw new GatewayError('invalid_request', args.message, { param: call.argumentsField });
      const { client, tool } = resolved;
      const binding = resolveBinding(client, request.principal, request);
      if (!binding.ok) throw new GatewayError('invalid_request', binding.reason);

      const ac = new AbortController();
      // The caller went away: the tool call is abandoned too.
      reply.raw.on('close', () => {
        if (!reply.raw.writableFinished) ac.abort();
      });
      const startedAt = rt.now();
      const start = startToolCall(startedAt, {
        llmRequestId: null,
        principal: request.principal,
        client,
        tool,
        args: args.value,
        metadata: logMetadata(request.headers, rt.state.snapshot.client.logging_headers),
      });
      // The pino line names the call, never its arguments or result; the tool log has them when content logging is on.
      const log = (outcome: string, logged: ToolCallOutcome) => {
        const endedAt = rt.now();
        rt.logger.info(
          {
            request_id: request.id,
            mcp_client: client.name,
            tool,
            call_id: call.id ?? null,
            outcome,
            duration_ms: Math.round((endedAt - startedAt) * 100) / 100,
          },
          'mcp tool executed',
        );
        recordToolCall(rt.mcpToolLog, start, logged, endedAt);
        void hold?.end(logged);
      };
      // A priced tool is paid from the key's budgets: a spent budget refuses (402) before the tool server is
      // called, and the refusal, like the other refusals of the caller's request, is not a tool-log row.
      const hold = await toolCharger(rt).reserve(start);
      let text: string;
      let isError: boolean;
      try {
        const result = await connections.call(client, tool, args.value, {
          binding: binding.binding,
          signal: ac.signal,
        });
        text = resultText(result);
        isError = result.isError === true;
        log(isError ? 'tool_error' : 'ok', { kind: 'result', result });
      } catch (err) {
        const auth = authErrorOf(err);
        if (auth) {
          log(auth.code, authFailure(auth));
          // The caller's credentials are fine; the tool server's authorization is missing: 403, its own code.
          throw new ProviderError('invalid_request', auth.message, {
            status: 403,
            type: 'permission_error',
            code: auth.code,
          });
        }
        const message = `MCP client '${client.name}': tool call failed: ${describeError(err)}`;
        log('failed', upstreamFailure(message));
        // The tool server's failure, not the gateway's: 502 with is_gateway_error false.
        throw new ProviderError('upstream', message, {
          status: 502,
          type: 'upstream_error',
          code: 'mcp_tool_call_failed',
        });
      }
      const flag = isError ? { is_error: true as const } : {};
      if (format === 'chat') {
        return {
          role: 'tool',
          ...(call.id !== undefined ? { tool_call_id: call.id } : {}),
          name: call.name,
          content: text,
          ...flag,
        };
      }
      return {
        id: `fco_${request.id.replaceAll('-', '')}`,
        type: 'function_call_output',
        status: isError ? 'incomplete' : 'completed',
        role: 'assistant',
        ...(call.id !== undefined ? { call_id: call.id } : {}),
        name: call.name,
        arguments: call.arguments ?? '',
        output: text,
        content: text,
        ...(isError ? { error: text, is_error: true } : {}),
      };
    },
  );
}
