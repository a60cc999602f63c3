// Veo on Vertex AI: `:predictLongRunning` at the key's project and region, polled with `:fetchPredictOperation`;
// the finished video comes back inline (base64, sent on as bytes) unless the job wrote it to Cloud Storage.
import { Readable } from 'node:stream';
import { isRecord } from '../../util/records.ts';
import { ProviderError } from '../errors.ts';
import { sendGoogleJson } from '../gemini/errors.ts';
import { operationJob, operationSamples, startedJob, veoRequest } from '../gemini/videos.ts';
import { BinaryBody } from '../shared/binary.ts';
import type { CallContext, VideoCalls } from '../types.ts';

type Url = (ctx: CallContext, model: string, method: 'predictLongRunning' | 'fetchPredictOperation') => string;
type Auth = (ctx: CallContext) => Promise<Record<string, string>>;

/** `projects/{p}/locations/{l}/publishers/google/models/{model}/operations/{id}`: what a Vertex video id may be. */
const OPERATION = /^projects\/[^/]+\/locations\/[^/]+\/publishers\/google\/models\/([^/]+)\/operations\/[^/]+$/;

export function vertexVideos(url: Url, model: (ctx: CallContext) => string, auth: Auth): VideoCalls {
  const poll = async (id: string, ctx: CallContext) => {
    const m = OPERATION.exec(id);
    if (!m) {
      throw new ProviderError('invalid_request', 'a Vertex video id is projects/…/models/{model}/operations/{id}');
    }
    const op = await sendGoogleJson<unknown>(ctx, {
      url: url(ctx, m[1]!, 'fetchPredictOperation'),
      headers: { ...(await auth(ctx)), 'content-type': 'application/json' },
      body: JSON.stringify({ operationName: id }),
    });
    if (!isRecord(op)) throw new ProviderError('bad_response', 'upstream operation is not an object');
    return { op, model: m[1]! };
  };
  return {
    async create(req, ctx) {
      const res = await sendGoogleJson<unknown>(ctx, {
        url: url(ctx, model(ctx), 'predictLongRunning'),
        headers: { ...(await auth(ctx)), 'content-type': 'application/json' },
        body: JSON.stringify(veoRequest(req)),
      });
      const name = isRecord(res) ? res['name'] : undefined;
      if (typeof name !== 'string') throw new ProviderError('bad_response', 'upstream started no operation');
      return startedJob(name, req, ctx.model);
    },
    async retrieve(id, ctx) {
      const { op, model: m } = await poll(id, ctx);
      return operationJob(op, m);
    },
    async content(id, variant, ctx) {
      if (variant !== undefined && variant !== 'video') {
        throw new ProviderError('invalid_request', `Veo has no ${variant} variant`);
      }
      const { op } = await poll(id, ctx);
      const video = operationSamples(op)[0]!;
      const b64 = video['bytesBase64Encoded'];
      if (typeof b64 !== 'string') {
        const where = typeof video['gcsUri'] === 'string' ? ` (${video['gcsUri']})` : '';
        throw new ProviderError('invalid_request', `the video was written to Cloud Storage${where}: read it there`);
      }
      const bytes = Buffer.from(b64, 'base64');
      const type = typeof video['mimeType'] === 'string' ? video['mimeType'] : 'video/mp4';
      return new BinaryBody(type, Readable.from([bytes]), { 'content-length': String(bytes.length) });
    },
  };
}
