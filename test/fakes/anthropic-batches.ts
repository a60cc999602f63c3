// A fake of Anthropic's Message Batches API (`/v1/messages/batches`): create from `{custom_id, params}` requests
// (params checked as the Messages API checks them), retrieve, list, cancel, and the `.jsonl` results of an ended
// batch (`succeeded` with a message and usage, `errored` with an error body, `canceled`). Serves the Files API
// fake beside it, as api.anthropic.com does.
import { randomUUID } from 'node:crypto';
import { type AnthropicStoredFile, anthropicError, anthropicFileRoutes, checkHeaders } from './anthropic-files.ts';
import { FakeServer, type RecordedRequest, sendJson } from './server.ts';

type Json = Record<string, unknown>;

interface StoredBatch {
  batch: Json;
  requests: { custom_id: string; params: Json }[];
}

export interface AnthropicBatchesFake extends FakeServer {
  files: Map<string, AnthropicStoredFile>;
  batches: Map<string, StoredBatch>;
  /** Ends a batch: each request succeeds with this usage, but a request for model `claude-fails` errors. */
  end(id: string, usage: { input_tokens: number; output_tokens: number }): void;
}

export function createAnthropicBatchesFake(): AnthropicBatchesFake {
  const files = new Map<string, AnthropicStoredFile>();
  const batches = new Map<string, StoredBatch>();
  const results = new Map<string, string>();
  const idOf = (req: RecordedRequest, at: number) => decodeURIComponent(req.path.split('/')[at] ?? '');
  const counts = (processing: number, more: Json = {}) => ({
    processing,
    succeeded: 0,
    errored: 0,
    canceled: 0,
    expired: 0,
    ...more,
  });
  const fake = new FakeServer([
    ...anthropicFileRoutes(files),
    {
      method: 'POST',
      path: '/v1/messages/batches',
      handler: (req, res) => {
        if (!checkHeaders(req, res)) return;
        const body = req.json as { requests?: { custom_id?: unknown; params?: Json }[] } | undefined;
        const requests = body?.requests;
        if (!Array.isArray(requests) || requests.length === 0) {
          return anthropicError(res, 400, 'invalid_request_error', 'requests: Field required');
        }
        for (const [i, r] of requests.entries()) {
          const p = r.params;
          if (typeof r.custom_id !== 'string' || !p || typeof p['model'] !== 'string') {
            return anthropicError(
              res,
              400,
              'invalid_request_error',
              `requests.${i}: custom_id and params.model required`,
            );
          }
          if (typeof p['max_tokens'] !== 'number' || !Array.isArray(p['messages'])) {
            return anthropicError(
              res,
              400,
              'invalid_request_error',
              `requests.${i}.params: max_tokens and messages required`,
            );
          }
          if (p['stream'] === true) return anthropicError(res, 400, 'invalid_request_error', 'stream is not allowed');
        }
        const now = new Date();
        const batch: Json = {
          id: `msgbatch_${randomUUID().replaceAll('-', '').slice(0, 24)}`,
          type: 'message_batch',
          processing_status: 'in_progress',
          request_counts: counts(requests.length),
          ended_at: null,
          created_at: now.toISOString(),
          expires_at: new Date(now.getTime() + 86_400_000).toISOString(),
          archived_at: null,
          cancel_initiated_at: null,
          results_url: null,
        };
        batches.set(String(batch['id']), { batch, requests: requests as StoredBatch['requests'] });
        sendJson(res, 200, batch);
      },
    },
    {
      method: 'GET',
      path: '/v1/messages/batches',
      handler: (req, res) => {
        if (!checkHeaders(req, res)) return;
        const data = [...batches.values()].map((b) => b.batch).reverse();
        sendJson(res, 200, {
          data,
          has_more: false,
          first_id: data[0]?.['id'] ?? null,
          last_id: data.at(-1)?.['id'] ?? null,
        });
      },
    },
    {
      method: 'GET',
      path: /^\/v1\/messages\/batches\/[^/]+$/,
      handler: (req, res) => {
        if (!checkHeaders(req, res)) return;
        const b = batches.get(idOf(req, 4));
        if (b) sendJson(res, 200, b.batch);
        else anthropicError(res, 404, 'not_found_error', 'batch not found');
      },
    },
    {
      method: 'POST',
      path: /^\/v1\/messages\/batches\/[^/]+\/cancel$/,
      handler: (req, res) => {
        if (!checkHeaders(req, res)) return;
        const b = batches.get(idOf(req, 4));
        if (!b) return anthropicError(res, 404, 'not_found_error', 'batch not found');
        Object.assign(b.batch, { processing_status: 'canceling', cancel_initiated_at: new Date().toISOString() });
        sendJson(res, 200, b.batch);
      },
    },
    {
      method: 'GET',
      path: /^\/v1\/messages\/batches\/[^/]+\/results$/,
      handler: (req, res) => {
        if (!checkHeaders(req, res)) return;
        const text = results.get(idOf(req, 4));
        if (text === undefined) return anthropicError(res, 400, 'invalid_request_error', 'batch has not ended');
        res.writeHead(200, { 'content-type': 'application/binary' });
        res.end(text);
      },
    },
  ]);
  return Object.assign(fake, {
    files,
    batches,
    end(id: string, usage: { input_tokens: number; output_tokens: number }) {
      const b = batches.get(id);
      if (!b) throw new Error(`no batch ${id}`);
      let succeeded = 0;
      let errored = 0;
      const lines = b.requests.map((r) => {
        if (r.params['model'] === 'claude-fails') {
          errored++;
          return {
            custom_id: r.custom_id,
            result: {
              type: 'errored',
              error: { type: 'error', error: { type: 'invalid_request_error', message: 'model not found' } },
            },
          };
        }
        succeeded++;
        return {
          custom_id: r.custom_id,
          result: {
            type: 'succeeded',
            message: {
              id: `msg_${r.custom_id}`,
              type: 'message',
              role: 'assistant',
              model: r.params['model'],
              content: [{ type: 'text', text: `done ${r.custom_id}` }],
              stop_reason: 'end_turn',
              stop_sequence: null,
              usage,
            },
          },
        };
      });
      results.set(id, `${lines.map((l) => JSON.stringify(l)).join('\n')}\n`);
      Object.assign(b.batch, {
        processing_status: 'ended',
        ended_at: new Date().toISOString(),
        request_counts: counts(0, { succeeded, errored }),
        results_url: `https://api.anthropic.com/v1/messages/batches/${id}/results`,
      });
    },
  });
}
