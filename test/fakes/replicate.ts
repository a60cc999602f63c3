// Fake Replicate API: predictions created on the models API (`/v1/models/{owner}/{name}/predictions`), the
// deployments API (`/v1/deployments/{owner}/{name}/predictions`) or by version (`/v1/predictions`), read back with
// `GET /v1/predictions/{id}`, canceled with `POST /v1/predictions/{id}/cancel`, output files served at `/files/{name}` (like replicate.delivery). A model whose name
// contains `slow` starts and finishes after `pollsToFinish` reads; `fail` fails; `elsewhere` answers an output URL
// on a private address the gateway must not fetch.
import { fakeImage } from './openai-images.ts';
import { FakeServer, type RecordedRequest, sendJson } from './server.ts';

interface FakePrediction {
  id: string;
  model: string;
  version?: string;
  input: Record<string, unknown>;
  status: string;
  output: string[] | null;
  error: string | null;
  reads: number;
}

export type ReplicateFake = FakeServer & {
  predictions: Map<string, FakePrediction>;
  /** Reads of a `slow` prediction before it succeeds. */
  pollsToFinish: number;
};

function origin(req: RecordedRequest): string {
  return `http://${String(req.headers.host)}`;
}

function view(p: FakePrediction, base: string) {
  return {
    id: p.id,
    model: p.model,
    version: p.version ?? 'dp-0123456789abcdef',
    input: p.input,
    logs: '',
    output: p.output,
    error: p.error,
    status: p.status,
    created_at: '2026-01-01T00:00:00.000Z',
    urls: { get: `${base}/v1/predictions/${p.id}`, cancel: `${base}/v1/predictions/${p.id}/cancel` },
    metrics: p.status === 'succeeded' ? { predict_time: 1.25 } : {},
  };
}

function finish(p: FakePrediction, base: string): void {
  if (p.model.includes('fail')) {
    p.status = 'failed';
    p.error = 'NSFW content detected. Try a different prompt.';
    return;
  }
  const n = Number(p.input['num_outputs'] ?? 1);
  const host = p.model.includes('elsewhere') ? 'http://10.0.0.7' : base;
  p.output = Array.from({ length: n }, (_, i) => `${host}/files/${p.id}-${i}.webp`);
  p.status = 'succeeded';
}

export function createReplicateFake(): ReplicateFake {
  const predictions = new Map<string, FakePrediction>();
  let seq = 0;
  const fake: ReplicateFake = Object.assign(
    new FakeServer([
      {
        method: 'POST',
        path: /^\/v1\/(?:(models|deployments)\/([^/]+)\/([^/]+)\/)?predictions$/,
        handler: (req, res) => {
          const body = req.json as { input?: Record<string, unknown>; version?: string };
          const m = /^\/v1\/(?:(models|deployments)\/([^/]+)\/([^/]+)\/)?predictions$/.exec(req.path)!;
          const model = m[2] ? `${m[2]}/${m[3]}` : `version:${body.version}`;
          const p: FakePrediction = {
            id: `pred${++seq}`,
            model,
            input: body.input ?? {},
            status: 'starting',
            output: null,
            error: null,
            reads: 0,
          };
          if (body.version) p.version = body.version;
          predictions.set(p.id, p);
          if (!model.includes('slow')) finish(p, origin(req));
          sendJson(res, 201, view(p, origin(req)));
        },
      },
      {
        method: 'GET',
        path: /^\/v1\/predictions\/[^/]+$/,
        handler: (req, res) => {
          const p = predictions.get(req.path.split('/').pop() ?? '');
          if (!p) return sendJson(res, 404, { title: 'Not found', detail: 'Prediction not found', status: 404 });
          p.reads++;
          if (p.status === 'starting' || p.status === 'processing') {
            if (p.reads >= fake.pollsToFinish) finish(p, origin(req));
            else p.status = 'processing';
          }
          sendJson(res, 200, view(p, origin(req)));
        },
      },
      {
        method: 'POST',
        path: /^\/v1\/predictions\/[^/]+\/cancel$/,
        handler: (req, res) => {
          const p = predictions.get(req.path.split('/')[3] ?? '');
          if (!p) return sendJson(res, 404, { title: 'Not found', detail: 'Prediction not found', status: 404 });
          if (p.status === 'starting' || p.status === 'processing') p.status = 'canceled';
          sendJson(res, 200, view(p, origin(req)));
        },
      },
      {
        method: 'GET',
        path: /^\/files\/[^/]+$/,
        handler: (req, res) => {
          res.writeHead(200, { 'content-type': 'image/webp' });
          res.end(fakeImage(`replicate:${req.path.slice('/files/'.length)}`));
        },
      },
    ]),
    { predictions, pollsToFinish: 2 },
  );
  return fake;
}
