// Rerank on Google Cloud through the Discovery Engine ranking API (`rankingConfigs/default_ranking_config:rank`,
// the semantic ranker Vertex AI Search uses), with the key's project and the Vertex credentials. At most 200
// records a call (the API's bound, refused before sending); billed like search units, one query per 100 records.
import {
  documentText,
  type RerankRequest,
  type RerankResponse,
  resultDocument,
  searchUnits,
} from '../../schemas/rerank.ts';
import { isRecord } from '../../util/records.ts';
import { ProviderError } from '../errors.ts';
import { sendGoogleJson } from '../gemini/errors.ts';
import { joinUrl } from '../shared/http.ts';
import { pathSegment } from '../shared/url.ts';
import type { CallContext } from '../types.ts';

export const DISCOVERY_ENGINE_URL = 'https://discoveryengine.googleapis.com';
export const MAX_RANKING_RECORDS = 200;

export function rankBody(req: RerankRequest, model: string): Record<string, unknown> {
  return {
    model,
    query: req.query,
    records: req.documents.map((d, i) => ({ id: String(i), content: documentText(d) })),
    ...(req.top_n !== undefined ? { topN: req.top_n } : {}),
    ignoreRecordDetailsInResponse: true,
  };
}

export function vertexRerank(auth: (ctx: CallContext) => Promise<Record<string, string>>) {
  return async (req: RerankRequest, ctx: CallContext): Promise<RerankResponse> => {
    if (req.documents.length > MAX_RANKING_RECORDS) {
      throw new ProviderError(
        'invalid_request',
        `${ctx.provider} ranks at most ${MAX_RANKING_RECORDS} documents a call`,
      );
    }
    const project = ctx.key.vertex_key_config?.project_id;
    if (!project) throw new ProviderError('invalid_request', `${ctx.provider} key has no vertex_key_config.project_id`);
    const path = `/v1/projects/${pathSegment(project)}/locations/global/rankingConfigs/default_ranking_config:rank`;
    const res = await sendGoogleJson<unknown>(ctx, {
      url: joinUrl(ctx.network.base_url ?? DISCOVERY_ENGINE_URL, path),
      headers: { ...(await auth(ctx)), 'content-type': 'application/json' },
      body: JSON.stringify(rankBody(req, ctx.key.aliases[ctx.model] ?? ctx.model)),
    });
    const records = isRecord(res) && Array.isArray(res['records']) ? res['records'] : undefined;
    if (!records) throw new ProviderError('bad_response', 'ranking answer has no records');
    const results = records.map((r: unknown) => {
      const index = isRecord(r) ? Number(r['id']) : Number.NaN;
      if (!isRecord(r) || !Number.isInteger(index) || index < 0 || index >= req.documents.length) {
        throw new ProviderError('bad_response', 'ranking answer has a record the request did not send');
      }
      const out: RerankResponse['results'][number] = { index, relevance_score: Number(r['score'] ?? 0) };
      if (req.return_documents) out.document = resultDocument(req, index);
      return out;
    });
    return {
      id: crypto.randomUUID(),
      model: ctx.model,
      results,
      meta: { billed_units: { search_units: searchUnits(req.documents.length) } },
    };
  };
}
