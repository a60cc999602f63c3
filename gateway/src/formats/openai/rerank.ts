// `POST /v1/rerank` in the unified (Cohere-style) shape, and the JSON-in, JSON-out operation both it and OCR are.
import { z } from 'zod';
import { formatIssues, issueParam } from '../../config/issues.ts';
import type { OperationSpec } from '../../engine/operations.ts';
import { rerankOp } from '../../engine/ops/rerank.ts';
import { GatewayError } from '../../http/errors.ts';
import type { RouteDoc } from '../../http/openapi.ts';
import { RerankRequest, type RerankResponse } from '../../schemas/rerank.ts';
import type { FormatOperation, WireFormat } from '../types.ts';

export const INFERENCE_ERRORS = [400, 402, 403, 404, 429, 502, 503, 504];

/** A JSON operation validated by `schema`, answered as the provider's object with the gateway's `extra_fields`. */
export function jsonOperation<Req extends { model: string; fallbacks?: string[] | undefined }, Res extends object>(
  format: WireFormat,
  schema: z.ZodType<Req>,
  spec: OperationSpec<Req, Res, never>,
  doc: RouteDoc,
): FormatOperation<Req, Res, never> {
  return {
    format,
    spec,
    doc,
    decode(parts) {
      const r = schema.safeParse(parts.body);
      if (!r.success) {
        const param = issueParam(r.error);
        throw new GatewayError('invalid_request', formatIssues(r.error), param ? { param } : {});
      }
      return { body: r.data, model: r.data.model, fallbacks: r.data.fallbacks, stream: false };
    },
    respond: (res, extra) => Object.assign(res, { extra_fields: extra }),
  };
}

const RerankView = z.looseObject({
  id: z.string(),
  model: z.string(),
  results: z.array(
    z.looseObject({
      index: z.number().int(),
      relevance_score: z.number(),
      document: z.looseObject({ text: z.string() }).optional(),
    }),
  ),
  meta: z.looseObject({ billed_units: z.looseObject({ search_units: z.number() }).optional() }).optional(),
});

export function rerankOperation(format: WireFormat): FormatOperation<RerankRequest, RerankResponse, never> {
  return jsonOperation(format, RerankRequest, rerankOp, {
    operationId: 'rerankDocuments',
    summary: 'Rerank documents by relevance to a query',
    tags: ['Rerank'],
    description:
      'model is `<provider>/<model>` (cohere; bedrock rerank models). Results are ordered by `relevance_score`, ' +
      'highest first; billed by search units (one query over up to 100 documents).',
    body: RerankRequest,
    bodyExamples: [{ model: 'cohere/rerank-v3.5', query: 'capital of France', documents: ['Paris', 'Berlin'] }],
    responses: { 200: { description: 'The ranked results with the gateway’s `extra_fields`', json: RerankView } },
    errors: INFERENCE_ERRORS,
  });
}
