// Rerank: served by providers with a rerank API (cohere natively, bedrock's rerank models); billed by search
// units (one query over up to 100 documents), as the provider reports them or, failing that, as counted here.
import { type RerankRequest, type RerankResponse, searchUnits } from '../../schemas/rerank.ts';
import type { OperationSpec } from '../operations.ts';

export const rerankOp: OperationSpec<RerankRequest, RerankResponse, never> = {
  requestType: 'rerank',
  label: 'rerank',
  unary: (a) => {
    const fn = a.rerank;
    return fn && ((req, ctx) => fn.call(a, req, ctx));
  },
  usage: (res) => ({
    prompt_tokens: 0,
    completion_tokens: 0,
    total_tokens: 0,
    units: { search_units: res.meta?.billed_units?.search_units ?? 1 },
  }),
  estimateUnits: (req) => ({ search_units: searchUnits(req.documents.length) }),
};
