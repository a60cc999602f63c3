// Message Batches (`/v1/messages/batches`) in OpenAI's batch shapes. A batch is created from inline requests:
// OpenAI batch lines (`{custom_id, body}` at /v1/chat/completions) are translated to Messages requests by the
// chat translation every Anthropic chat call uses; `{custom_id, params}` (Anthropic's own shape) and bodies at
// /v1/messages go as they are. Results come back as OpenAI output lines, each answer a chat completion, with
// Anthropic's own `result` kept beside it. Anthropic cannot read an uploaded file back, so input files are refused.
import { GatewayError } from '../../http/errors.ts';
import type {
  Batch,
  BatchCreateRequest,
  BatchList,
  BatchRequestItem,
  BatchResultEntry,
} from '../../schemas/batches.ts';
import { ChatRequest } from '../../schemas/chat.ts';
import { ProviderError } from '../errors.ts';
import { BATCH_PRICE_FACTOR, billedOf, jsonLines, notReady } from '../openai/batches.ts';
import { badShape, callJson } from '../openai/files.ts';
import { send } from '../shared/http.ts';
import { pathSegment } from '../shared/url.ts';
import type { BatchCalls, CallContext } from '../types.ts';
import { fromMessagesResponse, toMessagesRequest } from './chat.ts';
import { parseAnthropicError } from './errors.ts';
import { anthropicHost, anthropicPage, epochOrNull, epochSeconds } from './files.ts';
import type { MessagesResponse } from './types.ts';

type Json = Record<string, unknown>;

const host = anthropicHost();
const url = (ctx: CallContext, path: string) => `${host.root(ctx)}/messages/batches${path}`;
const one = (id: string) => `/${pathSegment(id)}`;

/** What every Anthropic batch reports as its endpoint: results carry a chat completion and the native message. */
const ENDPOINT = '/v1/messages';

export const anthropicBatches: BatchCalls = {
  async create(req, ctx) {
    if (!req.requests) {
      throw new GatewayError(
        'invalid_request',
        'anthropic batches take inline requests (Anthropic cannot read an uploaded file back): send requests instead of input_file_id',
        { param: 'input_file_id' },
      );
    }
    const endpoint = req.endpoint ?? '/v1/chat/completions';
    const requests = req.requests.map((r) => ({ custom_id: r.custom_id, params: paramsOf(r, endpoint, req, ctx) }));
    return batchOf(await callJson(host, ctx, { url: url(ctx, ''), body: JSON.stringify({ requests }) }));
  },
  retrieve: async (id, ctx) => batchOf(await callJson(host, ctx, { method: 'GET', url: url(ctx, one(id)) })),
  list: async (q, ctx) => (await anthropicPage(host, ctx, '/messages/batches', q, batchOf)) satisfies BatchList,
  cancel: async (id, ctx) => batchOf(await callJson(host, ctx, { url: url(ctx, `${one(id)}/cancel`) })),
  async results(id, ctx) {
    const batch = await callJson(host, ctx, { method: 'GET', url: url(ctx, one(id)) });
    if (batch['processing_status'] !== 'ended') throw notReady(id, statusOf(batch));
    // The results are read from the configured API root, never from a URL the answer names.
    const res = await send(
      ctx,
      { method: 'GET', url: url(ctx, `${one(id)}/results`), headers: host.headers(ctx.key) },
      parseAnthropicError,
    );
    const read = async function* (): AsyncIterable<BatchResultEntry> {
      for await (const line of jsonLines(res.body, ctx.network.max_response_bytes)) yield resultOf(line);
    };
    return { priceFactor: BATCH_PRICE_FACTOR, entries: read() };
  },
};

/** One inline request as Messages params: translated from an OpenAI chat body, or Anthropic's own as given. */
function paramsOf(r: BatchRequestItem, endpoint: string, req: BatchCreateRequest, ctx: CallContext): Json {
  const where = `requests[custom_id=${JSON.stringify(r.custom_id)}]`;
  const native = r.params !== undefined || (r.url ?? endpoint) === '/v1/messages';
  const given = r.params ?? r.body ?? {};
  const named = typeof given['model'] === 'string' ? given['model'] : req.model;
  if (named === undefined) {
    throw new GatewayError('invalid_request', `${where}: model is required (or the batch's model)`, {
      param: 'requests',
    });
  }
  const bare = named.startsWith(`${ctx.provider}/`) ? named.slice(ctx.provider.length + 1) : named;
  const model = ctx.key.aliases[bare] ?? bare;
  if (native) return { ...given, model };
  const url = r.url ?? endpoint;
  if (url !== '/v1/chat/completions') {
    throw new GatewayError(
      'unsupported_operation',
      `${where}: provider ${ctx.provider} batches run /v1/chat/completions or /v1/messages, not ${url}`,
      { param: 'endpoint' },
    );
  }
  const parsed = ChatRequest.safeParse({ ...given, model });
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new GatewayError('invalid_request', `${where}: ${issue?.path.join('.') || 'body'}: ${issue?.message}`, {
      param: 'requests',
    });
  }
  if (parsed.data.stream === true) {
    throw new GatewayError('invalid_request', `${where}: a batched request cannot stream`, { param: 'requests' });
  }
  try {
    // A plain object, the wire shape of a Messages request.
    return { ...toMessagesRequest(parsed.data, model, false) } as Json;
  } catch (err) {
    if (err instanceof ProviderError) {
      throw new GatewayError('invalid_request', `${where}: ${err.message}`, { param: 'requests' });
    }
    throw err;
  }
}

/** OpenAI's status of an Anthropic batch. */
function statusOf(b: Json): string {
  const counts = countsOf(b);
  switch (b['processing_status']) {
    case 'in_progress':
      return 'in_progress';
    case 'canceling':
      return 'cancelling';
    case 'ended':
      if (b['cancel_initiated_at']) return 'cancelled';
      if (counts.total > 0 && counts.expired === counts.total) return 'expired';
      return 'completed';
    default:
      return String(b['processing_status'] ?? 'unknown');
  }
}

function countsOf(b: Json): { total: number; succeeded: number; failed: number; expired: number } {
  const c = (b['request_counts'] ?? {}) as Json; // an object or absent; fields checked below
  const n = (k: string) => (typeof c[k] === 'number' ? (c[k] as number) : 0);
  const failed = n('errored') + n('canceled') + n('expired');
  return { total: n('processing') + n('succeeded') + failed, succeeded: n('succeeded'), failed, expired: n('expired') };
}

function batchOf(v: unknown): Batch {
  if (v === null || typeof v !== 'object' || typeof (v as Json)['id'] !== 'string') throw badShape('batch');
  const b = v as Json; // an object with a string id, checked above
  const counts = countsOf(b);
  return {
    id: b['id'] as string,
    object: 'batch',
    endpoint: ENDPOINT,
    input_file_id: null,
    completion_window: '24h',
    status: statusOf(b),
    output_file_id: null,
    error_file_id: null,
    created_at: epochSeconds(b['created_at']),
    in_progress_at: epochOrNull(b['created_at']),
    expires_at: epochOrNull(b['expires_at']),
    completed_at: b['processing_status'] === 'ended' ? epochOrNull(b['ended_at']) : null,
    cancelling_at: epochOrNull(b['cancel_initiated_at']),
    request_counts: { total: counts.total, completed: counts.succeeded, failed: counts.failed },
    metadata: null,
    processing_status: b['processing_status'],
  };
}

/** One line of Anthropic's results as an OpenAI output line, and what a successful request was billed. */
function resultOf(line: Json): BatchResultEntry {
  const customId = typeof line['custom_id'] === 'string' ? line['custom_id'] : '';
  const result = (line['result'] ?? {}) as Json; // an object or absent; fields checked below
  const base = { id: `batch_req_${customId}`, custom_id: customId, result };
  if (result['type'] === 'succeeded') {
    const message = result['message'] as MessagesResponse | undefined; // checked just below
    if (!message || typeof message !== 'object' || !Array.isArray(message.content)) throw badShape('batch result');
    const body = fromMessagesResponse(message);
    return {
      item: { ...base, response: { status_code: 200, request_id: message.id, body }, error: null },
      billed: billedOf(body),
    };
  }
  return { item: { ...base, response: null, error: errorOf(result) } };
}

function errorOf(result: Json): { code: string; message: string } {
  if (result['type'] === 'errored') {
    // `{type: 'error', error: {type, message}}`, the Messages API's error body.
    const outer = (result['error'] ?? {}) as Json;
    const inner = (outer['error'] ?? outer) as Json;
    return {
      code: typeof inner['type'] === 'string' ? inner['type'] : 'api_error',
      message: typeof inner['message'] === 'string' ? inner['message'] : 'the request failed',
    };
  }
  if (result['type'] === 'canceled')
    return { code: 'batch_cancelled', message: 'the batch was cancelled before this request ran' };
  if (result['type'] === 'expired')
    return { code: 'batch_expired', message: 'the batch expired before this request ran' };
  return { code: 'unknown_result', message: `unknown result type ${String(result['type'])}` };
}
