// Fake Bedrock Agents runtime `POST /rerank` (bedrock-agent-runtime), SigV4-checked like the Bedrock fake: scores
// inline text sources by the words they share with the query, answers `results[{index, relevanceScore}]` best first.

import { verifySignature } from './bedrock.ts';
import { FakeServer, sendJson } from './server.ts';

type Json = Record<string, unknown>;

export function createBedrockRerankFake(init: { accessKey: string; secretKey: string }): FakeServer {
  const options = { gapMs: 0, ...init };
  return new FakeServer([
    {
      method: 'POST',
      path: '/rerank',
      handler: async (req, res) => {
        res.setHeader('x-amzn-requestid', 'fake-rerank-1');
        const auth = await verifySignature(options, req);
        if (auth) return sendJson(res, 403, { message: auth.message }, { 'x-amzn-errortype': auth.type });
        const body = (req.json ?? {}) as Json;
        const query = ((body['queries'] as Json[] | undefined)?.[0]?.['textQuery'] as Json | undefined)?.['text'];
        const sources = (body['sources'] as Json[] | undefined) ?? [];
        const config = (body['rerankingConfiguration'] as Json | undefined)?.['bedrockRerankingConfiguration'] as
          | Json
          | undefined;
        const arn = (config?.['modelConfiguration'] as Json | undefined)?.['modelArn'];
        if (typeof query !== 'string' || sources.length === 0 || typeof arn !== 'string') {
          return sendJson(
            res,
            400,
            { message: 'queries, sources and modelArn are required' },
            {
              'x-amzn-errortype': 'ValidationException',
            },
          );
        }
        const words = new Set(query.toLowerCase().split(/\W+/).filter(Boolean));
        const scored = sources.map((s, index) => {
          const text = String(
            ((s['inlineDocumentSource'] as Json | undefined)?.['textDocument'] as Json | undefined)?.['text'] ?? '',
          );
          const shared = text
            .toLowerCase()
            .split(/\W+/)
            .filter((w) => words.has(w)).length;
          return { index, relevanceScore: shared / (shared + 1) };
        });
        scored.sort((a, b) => b.relevanceScore - a.relevanceScore || a.index - b.index);
        const n = typeof config?.['numberOfResults'] === 'number' ? config['numberOfResults'] : scored.length;
        sendJson(res, 200, { results: scored.slice(0, n) });
      },
    },
  ]);
}
