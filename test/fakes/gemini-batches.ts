// A fake of the Gemini API's batch mode: `models/{model}:batchGenerateContent` with inlined requests (each a
// GenerateContentRequest keyed by metadata.key) or an input file, long-running operations `batches/{id}` with
// GenerateContentBatch metadata (state, int64 batchStats as strings), list, `:cancel`, and results as inlined
// responses or a generated JSONL responses file. Serves the Files API fake beside it.
import { randomUUID } from 'node:crypto';
import { checkKey, type GeminiStoredFile, geminiFileRoutes, googleError, storeGeminiFile } from './gemini-files.ts';
import { FakeServer, sendJson } from './server.ts';

type Json = Record<string, unknown>;

interface StoredBatch {
  op: Json;
  /** Inline requests, or the input file's `{key, request}` lines. */
  requests: { key: string; request: Json }[];
}

export interface GeminiBatchesFake extends FakeServer {
  files: Map<string, GeminiStoredFile>;
  batches: Map<string, StoredBatch>;
  /** Ends a batch: each request answers with this usage (text `done <key>`); `asFile` writes a responses file. */
  succeed(name: string, usage: { promptTokenCount: number; candidatesTokenCount: number }, asFile?: boolean): void;
}

const META_TYPE = 'type.googleapis.com/google.ai.generativelanguage.v1main.GenerateContentBatch';

export function createGeminiBatchesFake(): GeminiBatchesFake {
  const files = new Map<string, GeminiStoredFile>();
  const batches = new Map<string, StoredBatch>();
  const byPath = (path: string) =>
    batches.get(`batches/${decodeURIComponent(path.split('/')[3] ?? '').replace(/:cancel$/, '')}`);
  let host = '';
  const fake = new FakeServer([
    ...geminiFileRoutes(files),
    {
      method: 'POST',
      path: /^\/v1beta\/models\/[^/]+:batchGenerateContent$/,
      handler: (req, res) => {
        if (!checkKey(req, res)) return;
        host = String(req.headers.host);
        const model = decodeURIComponent(req.path.split('/')[3] ?? '').replace(/:batchGenerateContent$/, '');
        const batch = (req.json as { batch?: Json } | undefined)?.batch;
        const input = batch?.['inputConfig'] as { requests?: { requests?: Json[] }; fileName?: string } | undefined;
        if (!batch || typeof batch['displayName'] !== 'string' || !input) {
          return googleError(res, 400, 'INVALID_ARGUMENT', 'batch.displayName and batch.inputConfig are required');
        }
        let requests: StoredBatch['requests'];
        if (input.fileName) {
          const f = files.get(input.fileName);
          if (!f) return googleError(res, 404, 'NOT_FOUND', `file ${input.fileName} not found`);
          requests = f.content
            .toString('utf8')
            .split('\n')
            .filter((l) => l.trim() !== '')
            .map((l) => JSON.parse(l) as { key: string; request: Json });
        } else {
          const list = input.requests?.requests ?? [];
          for (const r of list) {
            const request = r['request'] as Json | undefined;
            if (!request || !Array.isArray(request['contents'])) {
              return googleError(res, 400, 'INVALID_ARGUMENT', 'each request needs contents');
            }
          }
          requests = list.map((r, i) => ({
            key: String((r['metadata'] as Json | undefined)?.['key'] ?? i),
            request: r['request'] as Json,
          }));
        }
        const name = `batches/${randomUUID().replaceAll('-', '').slice(0, 16)}`;
        const now = new Date().toISOString();
        const op: Json = {
          name,
          metadata: {
            '@type': META_TYPE,
            model: `models/${model}`,
            displayName: batch['displayName'],
            createTime: now,
            updateTime: now,
            state: 'BATCH_STATE_PENDING',
            batchStats: { requestCount: String(requests.length), pendingRequestCount: String(requests.length) },
            name,
          },
        };
        batches.set(name, { op, requests });
        sendJson(res, 200, op);
      },
    },
    {
      method: 'GET',
      path: '/v1beta/batches',
      handler: (req, res) => {
        if (!checkKey(req, res)) return;
        sendJson(res, 200, { operations: [...batches.values()].map((b) => b.op) });
      },
    },
    {
      method: 'GET',
      path: /^\/v1beta\/batches\/[^/]+$/,
      handler: (req, res) => {
        if (!checkKey(req, res)) return;
        const b = byPath(req.path);
        if (b) sendJson(res, 200, b.op);
        else googleError(res, 404, 'NOT_FOUND', 'batch not found');
      },
    },
    {
      method: 'POST',
      path: /^\/v1beta\/batches\/[^/]+:cancel$/,
      handler: (req, res) => {
        if (!checkKey(req, res)) return;
        const b = byPath(req.path);
        if (!b) return googleError(res, 404, 'NOT_FOUND', 'batch not found');
        Object.assign(b.op['metadata'] as Json, { state: 'BATCH_STATE_CANCELLED', endTime: new Date().toISOString() });
        b.op['done'] = true;
        sendJson(res, 200, {});
      },
    },
  ]);
  return Object.assign(fake, {
    files,
    batches,
    succeed(name: string, usage: { promptTokenCount: number; candidatesTokenCount: number }, asFile = false) {
      const b = batches.get(name);
      if (!b) throw new Error(`no batch ${name}`);
      const model = String((b.op['metadata'] as Json)['model']).replace('models/', '');
      const answer = (key: string) => ({
        candidates: [{ content: { role: 'model', parts: [{ text: `done ${key}` }] }, finishReason: 'STOP', index: 0 }],
        usageMetadata: { ...usage, totalTokenCount: usage.promptTokenCount + usage.candidatesTokenCount },
        modelVersion: model,
        responseId: `resp-${key}`,
      });
      let response: Json;
      if (asFile) {
        const lines = b.requests.map((r) => JSON.stringify({ key: r.key, response: answer(r.key) }));
        const f = storeGeminiFile(
          files,
          host,
          'responses',
          'application/jsonl',
          Buffer.from(`${lines.join('\n')}\n`),
          'GENERATED',
        );
        response = { '@type': `${META_TYPE}Output`, responsesFile: f.meta.name };
      } else {
        response = {
          '@type': `${META_TYPE}Output`,
          inlinedResponses: {
            inlinedResponses: b.requests.map((r) => ({ response: answer(r.key), metadata: { key: r.key } })),
          },
        };
      }
      const n = String(b.requests.length);
      Object.assign(b.op['metadata'] as Json, {
        state: 'BATCH_STATE_SUCCEEDED',
        endTime: new Date().toISOString(),
        batchStats: { requestCount: n, successfulRequestCount: n },
        output: response,
      });
      Object.assign(b.op, { done: true, response });
    },
  });
}
