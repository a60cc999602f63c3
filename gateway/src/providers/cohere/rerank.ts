// Rerank on Cohere's v2 API, through the same upstream call as the `/cohere` pass-through (native.ts): the
// unified request becomes Cohere's body (documents as strings), the answer gains the documents when asked for.
import { documentText, type RerankRequest, type RerankResponse, resultDocument } from '../../schemas/rerank.ts';
import { isRecord } from '../../util/records.ts';
import { ProviderError } from '../errors.ts';
import type { CallContext, NativeUnary } from '../types.ts';

export function cohereRerank(call: NativeUnary): (req: RerankRequest, ctx: CallContext) => Promise<RerankResponse> {
  return async (req, ctx) => {
    const body: Record<string, unknown> = { query: req.query, documents: req.documents.map(documentText) };
    if (req.top_n !== undefined) body['top_n'] = req.top_n;
    if (req.max_tokens_per_doc !== undefined) body['max_tokens_per_doc'] = req.max_tokens_per_doc;
    if (req.priority !== undefined) body['priority'] = req.priority;
    const res = await call(body, ctx);
    const results = (res['results'] as unknown[]).map((r) => {
      if (!isRecord(r) || typeof r['index'] !== 'number' || typeof r['relevance_score'] !== 'number') {
        throw new ProviderError('bad_response', 'cohere returned a rerank result without index and relevance_score');
      }
      const out: RerankResponse['results'][number] = { index: r['index'], relevance_score: r['relevance_score'] };
      if (req.return_documents) out.document = resultDocument(req, r['index']);
      return out;
    });
    const meta = isRecord(res['meta']) ? res['meta'] : undefined;
    return {
      id: typeof res['id'] === 'string' ? res['id'] : crypto.randomUUID(),
      model: ctx.model,
      results,
      // Cohere's meta (billed_units.search_units) is what the request is billed by.
      ...(meta ? { meta: meta as RerankResponse['meta'] } : {}),
    };
  };
}
