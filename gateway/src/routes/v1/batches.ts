// `/v1/batches`: create, retrieve, list, cancel and results, in OpenAI's shapes whatever provider runs the batch.
// A batch is charged once, when its results are read whole: each request's usage at the provider's batch price.
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { batchRule, readBatchInput } from '../../engine/batch-input.ts';
import { requireBatchInput } from '../../engine/batch-input-scan.ts';
import { batchDialect, checkBatchReferences } from '../../engine/batch-references.ts';
import { byIdCall, kindById } from '../../engine/resource-by-id.ts';
import type { LogTail } from '../../engine/resource-call.ts';
import { type ListOp, ownedListCall } from '../../engine/resource-list.ts';
import { ownerRecord } from '../../engine/resource-owners.ts';
import type { ResourceRef } from '../../engine/resource-ref.ts';
import { ownersOf } from '../../engine/route-request.ts';
import { costNano, usageTokens } from '../../governance/cost.ts';
import type { Owners } from '../../governance/limits.ts';
import { planLimits } from '../../governance/limits.ts';
import type { RouteDoc } from '../../http/openapi.ts';
import { RequestError } from '../../http/request-error.ts';
import { BinaryBody } from '../../providers/shared/binary.ts';
import type { BatchCalls, CallContext, ProviderAdapter } from '../../providers/types.ts';
import type { Runtime } from '../../runtime.ts';
import {
  Batch,
  BatchCreateRequest,
  BatchList,
  type BatchListQuery,
  type BatchResultStream,
} from '../../schemas/batches.ts';
import { messageOf } from '../../util/errors.ts';
import { answer, answerById, parse } from './files.ts';

const ProviderQuery = z.object({
  provider: z.string().optional().meta({ description: 'The provider (or the x-model-provider header)' }),
});
const ListQuery = ProviderQuery.extend({
  limit: z.coerce.number().int().min(1).max(10_000).optional(),
  after: z.string().max(512).optional(),
  before: z.string().max(512).optional(),
});
const BatchParams = z.object({ batch_id: z.string().min(1).max(512) });

const tags = ['Batch'];
const doc = (d: Omit<RouteDoc, 'tags' | 'errors'>, errors = [403]): RouteDoc => ({ ...d, tags, errors });

/** Charges are remembered this long so a batch's results read twice are charged once (Postgres is idempotent too). */
const CHARGED_MS = 400 * 24 * 3600 * 1000;

export function registerBatchRoutes(app: FastifyInstance, rt: Runtime): void {
  app.post(
    '/batches',
    {
      config: {
        openapi: doc(
          {
            operationId: 'createBatch',
            summary: 'Create a batch',
            querystring: ProviderQuery,
            body: BatchCreateRequest,
            responses: { 200: { description: 'The batch (OpenAI shape)', json: Batch } },
            // Admitted like inference: a spent budget is 402, a request rate limit 429.
          },
          [402, 403, 429],
        ),
      },
    },
    (request, reply) => {
      let body: BatchCreateRequest;
      try {
        body = parse(BatchCreateRequest, request.body);
      } catch (err) {
        throw new RequestError(err, { request_type: 'batch_create' });
      }
      const model = body.model?.includes('/') ? body.model.slice(body.model.indexOf('/') + 1) : body.model;
      const vk = ownersOf(rt, request.principal).vk;
      return answer(
        rt,
        request,
        reply,
        { field: body.provider, model: body.model },
        {
          requestType: 'batch_create',
          label: 'batches',
          idempotent: false,
          admit: true,
          model,
          target: body.input_file_id ? { kind: 'file', id: body.input_file_id } : undefined,
          created: (v) => ({ kind: 'batch', id: (v as Batch).id }),
          names: (v) => batchFiles(v as Batch),
          method: (a) => {
            const create = a.batches?.create;
            if (!create) return undefined;
            return async (ctx) => {
              if (vk) {
                const pc = vk.provider_configs.find((c) => c.provider === ctx.provider);
                // A batch of one model (Gemini) had that model checked with the call; its lines cannot name another.
                const rule = a.batches?.oneModel ? undefined : batchRule(vk.name, pc, body);
                const dialect = batchDialect(a);
                // One read of the input serves both checks. Anthropic takes no input file and Gemini serves no
                // uploaded file back, so only OpenAI-style input files are read for their references alone.
                const references = {
                  endpoint: body.endpoint ?? '/v1/chat/completions',
                  dialect,
                  readsInputFile: dialect === 'openai',
                };
                const max = ctx.network.max_response_bytes;
                const refs = await readBatchInput(body, { rule, references }, fileReader(a, body, ctx), max);
                if (refs) await checkBatchReferences(rt, vk.id, ctx.provider, refs);
                // A Gemini input file's lines were checked when the key uploaded it, or the file cannot run.
                if (dialect === 'genai' && a.files?.upload && body.input_file_id !== undefined) {
                  await requireBatchInput(rt, vk.id, ctx.provider, body.input_file_id);
                }
              }
              return create.call(a.batches, body, ctx);
            };
          },
        },
      );
    },
  );
  app.get(
    '/batches',
    {
      config: {
        openapi: doc({
          operationId: 'listBatches',
          summary: 'List batches',
          querystring: ListQuery,
          responses: { 200: { description: 'A page of batches', json: BatchList } },
        }),
      },
    },
    (request, reply) => {
      const q = parse(ListQuery, request.query);
      const list: ListOp<BatchCalls, BatchListQuery, BatchList> = {
        requestType: 'batch_list',
        label: 'listing batches',
        method: (b) => b.list,
        // The files of the caller's batches become readable.
        names: (page) => page.data.flatMap(batchFiles),
      };
      return answer(rt, request, reply, {}, ownedListCall(rt, request.principal, BATCH, list, q));
    },
  );
  const byId = (operationId: string, summary: string, json: z.ZodType | undefined) =>
    doc({
      operationId,
      summary,
      params: BatchParams,
      querystring: ProviderQuery,
      responses: { 200: json ? { description: summary, json } : { description: summary, text: 'application/json' } },
    });
  app.get(
    '/batches/:batch_id',
    { config: { openapi: byId('retrieveBatch', 'Retrieve a batch', Batch) } },
    // The files a batch names become its owner's.
    answerById(rt, BATCH, {
      requestType: 'batch_retrieve',
      label: 'retrieving batches',
      method: (b) => b.retrieve,
      names: batchFiles,
    }),
  );
  app.post(
    '/batches/:batch_id/cancel',
    { config: { openapi: byId('cancelBatch', 'Cancel a batch', Batch) } },
    answerById(rt, BATCH, {
      requestType: 'batch_cancel',
      label: 'cancelling batches',
      method: (b) => b.cancel,
      names: batchFiles,
    }),
  );
  app.get(
    '/batches/:batch_id/results',
    { config: { openapi: byId('getBatchResults', 'The results of an ended batch, one per request', undefined) } },
    (request, reply) => {
      let finish: ((tail: LogTail) => void) | undefined;
      const c = byIdCall(
        BATCH,
        {
          requestType: 'batch_results',
          label: 'batch results',
          deferLog: (f) => {
            finish = f;
          },
          method: (b) =>
            b.results &&
            (async (id, ctx) => resultsBody(rt, id, await b.results!(id, ctx), ctx, (tail) => finish?.(tail))),
        },
        request,
      );
      return answer(rt, request, reply, {}, c);
    },
  );
}

/** A batch, as the routes on one batch address it. */
const BATCH = kindById(
  'batch',
  (a) => a.batches,
  (params) => parse(BatchParams, params).batch_id,
);

/** The files a batch names: its owner may read them (the output file is how results are fetched). */
function batchFiles(b: Batch): ResourceRef[] {
  const ids = [b.input_file_id, b.output_file_id, b.error_file_id];
  return ids.filter((id): id is string => typeof id === 'string' && id !== '').map((id) => ({ kind: 'file', id }));
}

/** The input file's bytes, read with the key that holds it; undefined when the provider cannot serve them. */
function fileReader(
  a: ProviderAdapter,
  body: BatchCreateRequest,
  ctx: CallContext,
): (() => Promise<AsyncIterable<Uint8Array>>) | undefined {
  const content = a.files?.content;
  const id = body.input_file_id;
  if (!content || id === undefined) return undefined;
  return async () => (await content.call(a.files, id, ctx)).body;
}

/**
 * The results as one JSON document streamed as the provider's lines arrive (`{object, batch_id, results: [...],
 * has_more}`); once every line has passed, the batch is charged to the caller's budgets, once, and the call's
 * log row is written with what this read charged.
 */
function resultsBody(
  rt: Runtime,
  batchId: string,
  res: BatchResultStream,
  ctx: CallContext,
  finish: (tail: LogTail) => void,
): BinaryBody {
  async function* bytes(): AsyncIterable<Uint8Array> {
    let ended = false;
    try {
      yield Buffer.from(`{"object":"list","batch_id":${JSON.stringify(batchId)},"results":[`);
      let first = true;
      const billed: Billed[] = [];
      for await (const entry of res.entries) {
        if (entry.billed) billed.push(entry.billed);
        yield Buffer.from((first ? '' : ',') + JSON.stringify(entry.item));
        first = false;
      }
      yield Buffer.from('],"has_more":false}');
      ended = true;
      const charged = await chargeBatch(rt, ctx.provider, batchId, billed, res.priceFactor).catch((err: unknown) => {
        rt.logger.error({ batch_id: batchId, err: messageOf(err) }, 'batch charge failed');
        return undefined;
      });
      finish(charged ?? {});
    } catch (err) {
      finish({ error: err });
      throw err;
    } finally {
      // The caller went away before the last line: nothing was charged.
      if (!ended)
        finish({ error: new Error('the caller closed the connection before the results ended'), statusCode: 499 });
    }
  }
  return new BinaryBody('application/json', bytes());
}

type Billed = { model: string; usage: Parameters<typeof usageTokens>[0] };

/**
 * Charges the batch to the budgets of the virtual key that created it (its owner record), once, the first time
 * its results are read whole, whoever reads them; returns what this read charged (the batch price and summed
 * tokens the first time, zero after) for the log row, which is then the creator's.
 */
async function chargeBatch(
  rt: Runtime,
  provider: string,
  batchId: string,
  billed: Billed[],
  factor: number,
): Promise<LogTail> {
  const rec = await ownerRecord(rt, provider, { kind: 'batch', id: batchId });
  const vk = rec?.virtualKeyId ? rt.state.snapshot.governance.virtualKeysById.get(rec.virtualKeyId) : undefined;
  const owners: Owners = ownersOf(rt, vk ? { kind: 'virtual_key', vk } : null);
  const overrides = rt.state.snapshot.governance.pricingOverrides;
  let total = 0;
  let priced = false;
  const usage = { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 };
  for (const b of billed) {
    usage.prompt_tokens += b.usage.prompt_tokens;
    usage.completion_tokens += b.usage.completion_tokens;
    usage.total_tokens += b.usage.total_tokens;
    const price = rt.prices.lookup(provider, b.model, overrides, { virtualKeyId: vk?.id });
    if (!price) continue;
    priced = true;
    total += Math.ceil(costNano(price.price, usageTokens(b.usage)) * factor);
  }
  const requestId = `batch:${provider}:${batchId}`;
  if (!(await rt.state.coord.setIfAbsent(`batch-charged:${requestId}`, '1', CHARGED_MS))) return { costNano: 0 };
  const tail: LogTail = { costNano: priced ? total : undefined, usage, owners };
  // A batch of the gateway's own callers (or one it did not create, or whose key was deleted) has no budget.
  if (!vk) return tail;
  const pc = vk.provider_configs.find((c) => c.provider === provider);
  const now = rt.now();
  const plan = planLimits(owners, pc, now, 0, false);
  if (plan.budgets.length === 0) return tail;
  await rt.state.counters.settle({
    requestId,
    now,
    budgets: plan.budgets.map((b) => ({ ...b, costNano: total })),
    tokens: [],
  });
  return tail;
}
