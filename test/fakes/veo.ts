// Fake Veo upstream, both Google surfaces: the Gemini API (`models/{m}:predictLongRunning`, operations read with
// GET, the video downloaded from a files URI) and Vertex AI (`:predictLongRunning` at a project and region,
// `:fetchPredictOperation`, the video inline as base64). An operation is done on its second poll.
import { FakeServer, type RecordedRequest, sendJson } from './server.ts';

interface Op {
  polls: number;
  model: string;
}

export type VeoFake = FakeServer & {
  ops: Map<string, Op>;
  /** Where finished Gemini operations say the video is (default: this fake's own files URI). */
  videoUri: ((file: string) => string) | undefined;
};

export function veoBytes(name: string): Buffer {
  return Buffer.concat([Buffer.from([0, 0, 0, 0x18, 0x66, 0x74, 0x79, 0x70]), Buffer.from(`veo:${name}`.repeat(32))]);
}

export function createVeoFake(): VeoFake {
  const ops = new Map<string, Op>();
  let n = 0;
  const vertexBase = /^\/v1\/projects\/([^/]+)\/locations\/([^/]+)\/publishers\/google\/models\/([^/:]+)/;
  const done = (op: Op) => op.polls >= 2;
  const fake: VeoFake = Object.assign(
    new FakeServer([
      {
        method: 'POST',
        path: /^\/v1beta\/models\/[^/:]+:predictLongRunning$/,
        handler: (req, res) => {
          const model = /models\/([^/:]+):/.exec(req.path)![1]!;
          const name = `models/${model}/operations/op${++n}`;
          ops.set(name, { polls: 0, model });
          sendJson(res, 200, { name });
        },
      },
      {
        method: 'GET',
        path: /^\/v1beta\/models\/[^/]+\/operations\/[^/]+$/,
        handler: (req, res) => {
          const name = req.path.slice('/v1beta/'.length);
          const op = ops.get(name);
          if (!op) return notFound(res, name);
          op.polls++;
          if (!done(op)) return sendJson(res, 200, { name, metadata: {} });
          const file = name.replaceAll('/', '_');
          const uri = fake.videoUri?.(file) ?? `${fake.url}/v1beta/files/${file}:download?alt=media`;
          sendJson(res, 200, {
            name,
            done: true,
            response: {
              '@type': 'type.googleapis.com/google.ai.generativelanguage.v1beta.PredictLongRunningResponse',
              generateVideoResponse: { generatedSamples: [{ video: { uri } }] },
            },
          });
        },
      },
      {
        method: 'GET',
        path: /^\/v1beta\/files\/[^/]+:download$/,
        handler: (req, res) => {
          const file = /files\/([^/:]+):download/.exec(req.path)![1]!;
          const bytes = veoBytes(file);
          res.writeHead(200, { 'content-type': 'video/mp4', 'content-length': bytes.length });
          res.end(bytes);
        },
      },
      {
        method: 'POST',
        path: /:predictLongRunning$/,
        handler: (req, res) => {
          const m = vertexBase.exec(req.path);
          if (!m) return notFound(res, req.path);
          const name = `projects/${m[1]}/locations/${m[2]}/publishers/google/models/${m[3]}/operations/${crypto.randomUUID()}`;
          ops.set(name, { polls: 0, model: m[3]! });
          sendJson(res, 200, { name });
        },
      },
      {
        method: 'POST',
        path: /:fetchPredictOperation$/,
        handler: (req: RecordedRequest, res) => {
          const name = String((req.json as { operationName?: unknown } | undefined)?.operationName ?? '');
          const op = ops.get(name);
          if (!op) return notFound(res, name);
          op.polls++;
          if (!done(op)) return sendJson(res, 200, { name, done: false });
          sendJson(res, 200, {
            name,
            done: true,
            response: {
              '@type': 'type.googleapis.com/cloud.ai.large_models.vision.GenerateVideoResponse',
              raiMediaFilteredCount: 0,
              videos: [{ bytesBase64Encoded: veoBytes(name).toString('base64'), mimeType: 'video/mp4' }],
            },
          });
        },
      },
    ]),
    { ops, videoUri: undefined as VeoFake['videoUri'] },
  );
  return fake;
}

function notFound(res: Parameters<typeof sendJson>[0], what: string): void {
  sendJson(res, 404, { error: { code: 404, message: `${what} not found`, status: 'NOT_FOUND' } });
}
