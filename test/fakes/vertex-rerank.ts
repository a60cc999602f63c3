// Fake Discovery Engine ranking API (`.../rankingConfigs/default_ranking_config:rank`): scores records by the words
// they share with the query and answers `records[{id, score}]` best first (ids and scores only, as asked).
import { FakeServer, sendJson } from './server.ts';

type Json = Record<string, unknown>;

export function createVertexRerankFake(token: string): FakeServer {
  return new FakeServer([
    {
      method: 'POST',
      path: /\/rankingConfigs\/default_ranking_config:rank$/,
      handler: (req, res) => {
        if (req.headers.authorization !== `Bearer ${token}`) {
          return sendJson(res, 401, { error: { code: 401, message: 'bad token', status: 'UNAUTHENTICATED' } });
        }
        const body = (req.json ?? {}) as Json;
        const records = (body['records'] as Json[] | undefined) ?? [];
        if (typeof body['query'] !== 'string' || records.length === 0 || records.length > 200) {
          return sendJson(res, 400, {
            error: { code: 400, message: 'query and 1-200 records', status: 'INVALID_ARGUMENT' },
          });
        }
        const words = new Set(body['query'].toLowerCase().split(/\W+/).filter(Boolean));
        const scored = records.map((r) => {
          const shared = String(r['content'])
            .toLowerCase()
            .split(/\W+/)
            .filter((w) => words.has(w)).length;
          return { id: String(r['id']), score: Math.round((shared / (shared + 1)) * 100) / 100 };
        });
        scored.sort((a, b) => b.score - a.score);
        const top = typeof body['topN'] === 'number' ? body['topN'] : scored.length;
        sendJson(res, 200, { records: scored.slice(0, top) });
      },
    },
  ]);
}
