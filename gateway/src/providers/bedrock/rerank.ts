// Rerank on Bedrock through the Agents runtime's Rerank API (`POST /rerank` on bedrock-agent-runtime), which
// serves Amazon's and Cohere's rerank models by model ARN. Billed like Cohere's search units: one query over up to
// 100 documents each (Bedrock's own price is per such query).
import {
  documentText,
  type RerankRequest,
  type RerankResponse,
  resultDocument,
  searchUnits,
} from '../../schemas/rerank.ts';
import { isRecord } from '../../util/records.ts';
import { ProviderError } from '../errors.ts';
import { joinUrl, send } from '../shared/http.ts';
import type { CallContext } from '../types.ts';
import type { CredentialSource } from './credentials.ts';
import { parseBedrockError } from './errors.ts';
import { bedrockConfig, bedrockModelId, signRequest } from './signing.ts';

/** `network_config.base_url` replaces the Agents runtime's host too (how tests reach a fake). */
function rerankUrl(ctx: CallContext, region: string): string {
  return joinUrl(ctx.network.base_url ?? `https://bedrock-agent-runtime.${region}.amazonaws.com`, '/rerank');
}

/** A model id becomes its foundation-model ARN in the key's region; an ARN (from an alias) is used as it is. */
export function rerankModelArn(modelId: string, region: string): string {
  return modelId.startsWith('arn:') ? modelId : `arn:aws:bedrock:${region}::foundation-model/${modelId}`;
}

export function rerankBody(req: RerankRequest, modelArn: string): Record<string, unknown> {
  const modelConfiguration: Record<string, unknown> = { modelArn };
  if (req.max_tokens_per_doc !== undefined) {
    modelConfiguration['additionalModelRequestFields'] = { max_tokens_per_doc: req.max_tokens_per_doc };
  }
  return {
    queries: [{ type: 'TEXT', textQuery: { text: req.query } }],
    sources: req.documents.map((d) => ({
      type: 'INLINE',
      inlineDocumentSource: { type: 'TEXT', textDocument: { text: documentText(d) } },
    })),
    rerankingConfiguration: {
      type: 'BEDROCK_RERANKING_MODEL',
      bedrockRerankingConfiguration: {
        numberOfResults: Math.min(req.top_n ?? req.documents.length, req.documents.length),
        modelConfiguration,
      },
    },
  };
}

export function bedrockRerank(source: CredentialSource) {
  return async (req: RerankRequest, ctx: CallContext): Promise<RerankResponse> => {
    const region = bedrockConfig(ctx.key).region;
    const url = rerankUrl(ctx, region);
    const body = JSON.stringify(rerankBody(req, rerankModelArn(bedrockModelId(ctx), region)));
    const credentials = await source.credentials(ctx.key, ctx.network);
    const headers = await signRequest(region, credentials, url, body, { 'content-type': 'application/json' });
    const res = await send(ctx, { url, headers, body }, parseBedrockError);
    let answer: unknown;
    try {
      answer = await res.body.json();
    } catch (err) {
      if (err instanceof ProviderError) throw err;
      throw new ProviderError('bad_response', 'bedrock rerank returned a body that is not JSON', { cause: err });
    }
    if (!isRecord(answer) || !Array.isArray(answer['results'])) {
      throw new ProviderError('bad_response', 'bedrock rerank answer has no results');
    }
    const results = answer['results'].map((r: unknown) => {
      if (!isRecord(r) || typeof r['index'] !== 'number' || typeof r['relevanceScore'] !== 'number') {
        throw new ProviderError('bad_response', 'bedrock rerank result has no index and relevanceScore');
      }
      const out: RerankResponse['results'][number] = { index: r['index'], relevance_score: r['relevanceScore'] };
      if (req.return_documents) out.document = resultDocument(req, r['index']);
      return out;
    });
    const requestId = res.headers['x-amzn-requestid'];
    return {
      id: typeof requestId === 'string' ? requestId : crypto.randomUUID(),
      model: ctx.model,
      results,
      meta: { billed_units: { search_units: searchUnits(req.documents.length) } },
    };
  };
}
