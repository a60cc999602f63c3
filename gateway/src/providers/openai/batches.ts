// Batches on OpenAI's `/v1/batches` (and Azure OpenAI's v1 API): create from an uploaded JSONL file (or inline
// requests, which the gateway uploads as that file first), retrieve, list, cancel, and the results read line by
// line from the output and error files as they arrive.
import type { UsageSummary } from '../../engine/operations.ts';
import { GatewayError } from '../../http/errors.ts';
import type { Batch, BatchList, BatchResultEntry, BatchResultItem } from '../../schemas/batches.ts';
import { ProviderError } from '../errors.ts';
import { send } from '../shared/http.ts';
import { pathSegment } from '../shared/url.ts';
import type { BatchCalls, CallContext } from '../types.ts';
import { parseOpenAIError } from './errors.ts';
import { type ApiHost, badShape, callJson, fileObject, streamedForm } from './files.ts';

type Json = Record<string, unknown>;

/** OpenAI, Azure, Anthropic and Gemini all bill batched requests at half their list price. */
export const BATCH_PRICE_FACTOR = 0.5;

export function openAIStyleBatches(host: ApiHost): BatchCalls {
  const url = (ctx: CallContext, path: string) => host.root(ctx) + path;
  const one = (id: string) => `/batches/${pathSegment(id)}`;
  return {
    async create(req, ctx) {
      const endpoint = req.endpoint ?? '/v1/chat/completions';
      let inputFileId = req.input_file_id;
      if (req.requests) {
        // Inline requests become the JSONL input file OpenAI's batches take.
        const lines = req.requests.map((r) =>
          JSON.stringify({
            custom_id: r.custom_id,
            method: 'POST',
            url: r.url ?? endpoint,
            body: r.body ?? r.params ?? {},
          }),
        );
        const data = (async function* () {
          yield Buffer.from(`${lines.join('\n')}\n`);
        })();
        const { body, contentType } = streamedForm({
          filename: 'batch-input.jsonl',
          mimetype: 'application/jsonl',
          data,
          fields: () => ({ purpose: 'batch' }),
        });
        const file = fileObject(
          await callJson(host, ctx, { url: url(ctx, '/files'), body }, { 'content-type': contentType }),
        );
        inputFileId = file.id;
      }
      const body: Json = {
        input_file_id: inputFileId,
        endpoint,
        completion_window: req.completion_window ?? '24h',
      };
      if (req.metadata) body['metadata'] = req.metadata;
      if (req.output_expires_after) body['output_expires_after'] = req.output_expires_after;
      return batchObject(await callJson(host, ctx, { url: url(ctx, '/batches'), body: JSON.stringify(body) }));
    },
    retrieve: async (id, ctx) => batchObject(await callJson(host, ctx, { method: 'GET', url: url(ctx, one(id)) })),
    async list(q, ctx) {
      const query = new URLSearchParams();
      if (q.limit !== undefined) query.set('limit', String(q.limit));
      if (q.after !== undefined) query.set('after', q.after);
      const res = await callJson(host, ctx, {
        method: 'GET',
        url: url(ctx, `/batches${query.size > 0 ? `?${query}` : ''}`),
      });
      if (!Array.isArray(res['data'])) throw badShape('batch list');
      return {
        ...res,
        object: 'list',
        data: res['data'].map(batchObject),
        has_more: res['has_more'] === true,
      } as BatchList;
    },
    cancel: async (id, ctx) => batchObject(await callJson(host, ctx, { url: url(ctx, `${one(id)}/cancel`) })),
    async results(id, ctx) {
      const batch = await batchObject(await callJson(host, ctx, { method: 'GET', url: url(ctx, one(id)) }));
      const files = [batch.output_file_id, batch.error_file_id].filter(
        (f): f is string => typeof f === 'string' && f !== '',
      );
      if (files.length === 0) throw notReady(id, batch.status);
      const read = async function* (): AsyncIterable<BatchResultEntry> {
        for (const file of files) {
          const res = await send(
            ctx,
            { method: 'GET', url: url(ctx, `/files/${pathSegment(file)}/content`), headers: host.headers(ctx.key) },
            parseOpenAIError,
          );
          for await (const line of jsonLines(res.body, ctx.network.max_response_bytes)) yield openAIResult(line);
        }
      };
      return { priceFactor: BATCH_PRICE_FACTOR, entries: read() };
    },
  };
}

/** Results exist once a batch ended; before that the caller is told its status. */
export function notReady(id: string, status: unknown): GatewayError {
  return new GatewayError(
    'invalid_request',
    `batch ${id} has no results yet (status ${String(status)}); poll GET /v1/batches/${id} until it has ended`,
    { param: 'batch_id' },
  );
}

export function batchObject(v: unknown): Batch {
  if (v === null || typeof v !== 'object' || typeof (v as Json)['id'] !== 'string') throw badShape('batch');
  const o = v as Json; // an object with a string id, checked above
  return {
    ...o,
    id: o['id'] as string,
    object: 'batch',
    endpoint: typeof o['endpoint'] === 'string' ? o['endpoint'] : '',
    completion_window: typeof o['completion_window'] === 'string' ? o['completion_window'] : '24h',
    status: typeof o['status'] === 'string' ? o['status'] : 'unknown',
    created_at: typeof o['created_at'] === 'number' ? o['created_at'] : 0,
  };
}

/** One line of an OpenAI output or error file, and what it was billed. */
function openAIResult(line: Json): BatchResultEntry {
  const item = {
    ...line,
    custom_id: typeof line['custom_id'] === 'string' ? line['custom_id'] : '',
  } as BatchResultItem;
  const response = line['response'];
  if (response === null || typeof response !== 'object') return { item };
  const body = (response as Json)['body']; // checked to be an object above
  return { item, billed: billedOf(body) };
}

/** The model and usage of an answer body (chat, completions, embeddings, Responses usage shapes). */
export function billedOf(body: unknown): BatchResultEntry['billed'] {
  if (body === null || typeof body !== 'object') return undefined;
  const b = body as Json; // an object, checked above
  const u = b['usage'];
  if (typeof b['model'] !== 'string' || u === null || typeof u !== 'object') return undefined;
  const usage = u as Json; // an object, checked above
  const num = (k: string) => (typeof usage[k] === 'number' ? (usage[k] as number) : 0);
  const prompt = num('prompt_tokens') || num('input_tokens');
  const completion = num('completion_tokens') || num('output_tokens');
  const summary: UsageSummary = {
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: prompt + completion,
  };
  return { model: b['model'], usage: summary };
}

/** JSON objects of a JSONL body as they arrive; a line longer than `maxLineBytes` fails the read. */
export async function* jsonLines(
  body: AsyncIterable<Uint8Array>,
  maxLineBytes: number,
  what = 'the batch results',
): AsyncIterable<Json> {
  let pending = '';
  const decoder = new TextDecoder();
  const parse = (line: string): Json | undefined => {
    const t = line.trim();
    if (t === '') return undefined;
    let v: unknown;
    try {
      v = JSON.parse(t);
    } catch (err) {
      throw new ProviderError('bad_response', `a line of ${what} is not JSON`, { cause: err });
    }
    if (v === null || typeof v !== 'object' || Array.isArray(v)) {
      throw new ProviderError('bad_response', `a line of ${what} is not a JSON object`);
    }
    return v as Json; // a non-array object, checked above
  };
  for await (const chunk of body) {
    pending += decoder.decode(chunk, { stream: true });
    let nl = pending.indexOf('\n');
    while (nl >= 0) {
      const obj = parse(pending.slice(0, nl));
      pending = pending.slice(nl + 1);
      if (obj) yield obj;
      nl = pending.indexOf('\n');
    }
    if (pending.length > maxLineBytes) {
      throw new ProviderError('bad_response', `a line of ${what} is longer than ${maxLineBytes} bytes`);
    }
  }
  const last = parse(pending + decoder.decode());
  if (last) yield last;
}
