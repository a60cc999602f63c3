// Gemini batch mode in OpenAI's batch shapes. A batch runs one model (`models/{model}:batchGenerateContent`):
// inline OpenAI chat lines are translated to GenerateContentRequests by the chat translation every Gemini call
// uses (`{custom_id, params}` lines are Gemini's own requests, sent as they are), each keyed by its custom_id;
// an input file is Gemini's own JSONL (`{key, request}` lines) and is named as it is. Batches are long-running
// operations (`batches/{id}`), polled with retrieve; results come from the inlined responses or the responses
// file, translated back to OpenAI output lines.
import { GatewayError } from '../../http/errors.ts';
import type {
  Batch,
  BatchCreateRequest,
  BatchList,
  BatchRequestItem,
  BatchResultEntry,
} from '../../schemas/batches.ts';
import { ChatRequest } from '../../schemas/chat.ts';
import { epochOrNull, epochSeconds } from '../anthropic/files.ts';
import { ProviderError } from '../errors.ts';
import { BATCH_PRICE_FACTOR, billedOf, jsonLines, notReady } from '../openai/batches.ts';
import { badShape } from '../openai/files.ts';
import { joinUrl } from '../shared/http.ts';
import type { BatchCalls, CallContext } from '../types.ts';
import { sendGoogle } from './errors.ts';
import { type GoogleApi, googleJson, googlePage, resourcePath } from './files.ts';
import { toGenerateContentRequest } from './request.ts';
import { toChatResponse } from './response.ts';
import type { GenerateContentResponse } from './wire.ts';

type Json = Record<string, unknown>;

const ENDPOINT = '/v1/chat/completions';

export function geminiBatches(api: GoogleApi, modelPath: (model: string) => string): BatchCalls {
  const v1 = (ctx: CallContext, path: string) => joinUrl(api.base(ctx), `/v1beta/${path}`);
  const get = async (id: string, ctx: CallContext) =>
    googleJson(ctx, { method: 'GET', url: v1(ctx, resourcePath('batches', id)), headers: api.auth(ctx) });
  return {
    oneModel: true,
    async create(req, ctx) {
      if (!ctx.model) {
        throw new GatewayError('invalid_request', 'model: required for gemini batches (a batch runs one model)', {
          param: 'model',
        });
      }
      const model = ctx.key.aliases[ctx.model] ?? ctx.model;
      if (req.endpoint !== undefined && req.endpoint !== ENDPOINT) {
        throw new GatewayError(
          'unsupported_operation',
          `provider ${ctx.provider} batches run ${ENDPOINT}, not ${req.endpoint}`,
          { param: 'endpoint' },
        );
      }
      const inputConfig = req.requests
        ? {
            requests: {
              requests: req.requests.map((r) => ({ request: requestOf(r, ctx), metadata: { key: r.custom_id } })),
            },
          }
        : { fileName: resourcePath('files', req.input_file_id ?? '') };
      const displayName = req.metadata?.['display_name'] ?? `gateway batch ${new Date().toISOString()}`;
      const op = await googleJson(ctx, {
        url: joinUrl(api.base(ctx), `/v1beta/${modelPath(model)}:batchGenerateContent`),
        headers: { ...api.auth(ctx), 'content-type': 'application/json' },
        body: JSON.stringify({ batch: { displayName, inputConfig } }),
      });
      return batchOf(op, req);
    },
    retrieve: async (id, ctx) => batchOf(await get(id, ctx)),
    list: async (q, ctx) =>
      (await googlePage(api, ctx, q, { collection: 'batches', field: 'operations', maxPage: 1000 }, (o) =>
        batchOf(o),
      )) satisfies BatchList,
    async cancel(id, ctx) {
      await googleJson(ctx, {
        url: `${v1(ctx, resourcePath('batches', id))}:cancel`,
        headers: { ...api.auth(ctx), 'content-type': 'application/json' },
        body: '{}',
      });
      // Cancel answers nothing: the batch as it now stands.
      return batchOf(await get(id, ctx));
    },
    async results(id, ctx) {
      const op = await get(id, ctx);
      const batch = batchOf(op);
      const output = outputOf(op);
      if (!['completed', 'cancelled', 'expired', 'failed'].includes(batch.status) || !output) {
        throw notReady(id, batch.status);
      }
      const model = typeof metaOf(op)['model'] === 'string' ? String(metaOf(op)['model']).replace(/^models\//, '') : '';
      // `inlinedResponses` is the InlinedResponses message (its own `inlinedResponses` list), or the list itself.
      const wrapper = output['inlinedResponses'];
      const inlined = Array.isArray(wrapper) ? wrapper : (wrapper as Json | undefined)?.['inlinedResponses'];
      const file = output['responsesFile'];
      const read = async function* (): AsyncIterable<BatchResultEntry> {
        if (Array.isArray(inlined)) {
          for (const [i, r] of inlined.entries()) yield resultOf(r as Json, i, model);
          return;
        }
        if (typeof file !== 'string') return;
        const res = await sendGoogle(ctx, {
          method: 'GET',
          url: `${joinUrl(api.base(ctx), `/download/v1beta/${resourcePath('files', file)}:download`)}?alt=media`,
          headers: api.auth(ctx),
        });
        let i = 0;
        for await (const line of jsonLines(res.body, ctx.network.max_response_bytes)) yield resultOf(line, i++, model);
      };
      return { priceFactor: BATCH_PRICE_FACTOR, entries: read() };
    },
  };
}

/** One inline request as a GenerateContentRequest: translated from an OpenAI chat body, or Gemini's own. */
function requestOf(r: BatchRequestItem, ctx: CallContext): Json {
  const where = `requests[custom_id=${JSON.stringify(r.custom_id)}]`;
  const fail = (message: string) => new GatewayError('invalid_request', `${where}: ${message}`, { param: 'requests' });
  if (r.params !== undefined) return r.params;
  const body = r.body ?? {};
  if (r.url !== undefined && r.url !== ENDPOINT) {
    throw new GatewayError(
      'unsupported_operation',
      `${where}: provider ${ctx.provider} batches run ${ENDPOINT}, not ${r.url}`,
      {
        param: 'requests',
      },
    );
  }
  const named = typeof body['model'] === 'string' ? body['model'].replace(`${ctx.provider}/`, '') : undefined;
  if (named !== undefined && named !== ctx.model) throw fail(`model ${named} is not the batch's model ${ctx.model}`);
  const parsed = ChatRequest.safeParse({ ...body, model: ctx.model });
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw fail(`${issue?.path.join('.') || 'body'}: ${issue?.message}`);
  }
  if (parsed.data.stream === true) throw fail('a batched request cannot stream');
  try {
    // A plain object, the wire shape of a GenerateContentRequest.
    return { ...toGenerateContentRequest(parsed.data, ctx.model) } as Json;
  } catch (err) {
    if (err instanceof ProviderError) throw fail(err.message);
    throw err;
  }
}

function metaOf(op: Json): Json {
  const m = op['metadata'];
  return m !== null && typeof m === 'object' ? (m as Json) : {};
}

function outputOf(op: Json): Json | undefined {
  const res = op['response'] as Json | undefined;
  const out = (res?.['output'] ?? res ?? metaOf(op)['output']) as Json | undefined;
  if (!out || typeof out !== 'object') return undefined;
  return 'inlinedResponses' in out || 'responsesFile' in out ? out : (metaOf(op)['output'] as Json | undefined);
}

/** Gemini's batch states (BATCH_STATE_* and the SDKs' JOB_STATE_*) as OpenAI's statuses. */
const STATUSES: Record<string, string> = {
  PENDING: 'validating',
  QUEUED: 'validating',
  RUNNING: 'in_progress',
  SUCCEEDED: 'completed',
  FAILED: 'failed',
  CANCELLING: 'cancelling',
  CANCELLED: 'cancelled',
  EXPIRED: 'expired',
};

function batchOf(v: unknown, req?: BatchCreateRequest): Batch {
  if (v === null || typeof v !== 'object' || typeof (v as Json)['name'] !== 'string') throw badShape('batch');
  const op = v as Json; // an object with a string name, checked above
  const m = metaOf(op);
  const state = String(m['state'] ?? '').replace(/^(BATCH|JOB)_STATE_/, '');
  const stats = (m['batchStats'] ?? {}) as Json; // int64 counts as strings
  const n = (k: string) => Number(stats[k] ?? 0) || 0;
  const total = n('requestCount') || (req?.requests?.length ?? 0);
  const ended = epochOrNull(m['endTime']);
  const status = STATUSES[state] ?? (op['done'] === true ? 'completed' : 'validating');
  return {
    id: op['name'] as string,
    object: 'batch',
    endpoint: ENDPOINT,
    input_file_id: req?.input_file_id ?? null,
    completion_window: '24h',
    status,
    output_file_id:
      typeof outputOf(op)?.['responsesFile'] === 'string' ? String(outputOf(op)?.['responsesFile']) : null,
    error_file_id: null,
    created_at: epochSeconds(m['createTime']),
    completed_at: status === 'completed' ? ended : null,
    failed_at: status === 'failed' ? ended : null,
    cancelled_at: status === 'cancelled' ? ended : null,
    request_counts: { total, completed: n('successfulRequestCount'), failed: n('failedRequestCount') },
    metadata: req?.metadata ?? (typeof m['displayName'] === 'string' ? { display_name: m['displayName'] } : null),
    model: typeof m['model'] === 'string' ? m['model'] : undefined,
  };
}

/** One response (inlined, or a line of the responses file) as an OpenAI output line. */
function resultOf(r: Json, index: number, model: string): BatchResultEntry {
  const meta = (r['metadata'] ?? {}) as Json;
  const key = meta['key'] ?? r['key'];
  const customId = typeof key === 'string' ? key : String(index);
  const response = r['response'] as GenerateContentResponse | undefined;
  if (response && typeof response === 'object') {
    const body = toChatResponse(response, model);
    return {
      item: {
        id: `batch_req_${customId}`,
        custom_id: customId,
        response: { status_code: 200, request_id: body.id, body },
        error: null,
      },
      billed: billedOf(body),
    };
  }
  const err = (r['error'] ?? {}) as Json;
  return {
    item: {
      id: `batch_req_${customId}`,
      custom_id: customId,
      response: null,
      error: {
        code: typeof err['status'] === 'string' ? err['status'] : 'error',
        message: typeof err['message'] === 'string' ? err['message'] : 'the request failed',
      },
    },
  };
}
