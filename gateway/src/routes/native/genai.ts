// `/genai`: the Gemini API. `POST /v1beta/models/{model}:{method}` (and `/v1/...`, where a client configured with
// `apiVersion: 'v1'` sends it): one route per version takes every method, as the method sits after a colon in the
// last segment, which fastify cannot route on; the format's decoder splits it off (404 for an unknown method).
import type { OutgoingHttpHeaders, ServerResponse } from 'node:http';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { genaiFormat } from '../../formats/genai/format.ts';
import { modelsCall } from '../../formats/genai/operations.ts';
import { JSON_ARRAY_CONTENT_TYPE } from '../../formats/genai/stream-codec.ts';
import { SSE_CONTENT_TYPE } from '../../http/stream-writer.ts';
import { registerInferenceRoute } from '../inference-route.ts';
import { registerGenaiModelList } from './genai-models.ts';
import type { NativeRoutes } from './native-routes.ts';

export const genaiRoutes: NativeRoutes = {
  segment: 'genai',
  format: genaiFormat,
  carriers: { headers: ['x-goog-api-key'], query: 'key' },
  register(f, rt) {
    f.addHook('onRequest', jsonArrayStreams);
    for (const version of ['v1beta', 'v1']) {
      const suffix = version === 'v1' ? 'V1' : '';
      const op = { ...modelsCall, doc: { ...modelsCall.doc, operationId: `${modelsCall.doc.operationId}${suffix}` } };
      registerInferenceRoute(f, rt, `/${version}/models/*`, op);
      registerGenaiModelList(f, rt, version, suffix);
    }
  },
};

/**
 * `:streamGenerateContent` without `alt=sse` streams a JSON array, whose content type is `application/json`; the
 * format's stream codec declares one content type (SSE) for the route, so the stream's head is corrected here.
 */
function jsonArrayStreams(request: FastifyRequest, reply: FastifyReply, done: () => void): void {
  const url = request.url;
  if (url.includes(':streamGenerateContent') && !/[?&]alt=sse(&|$)/.test(url)) {
    correctStreamHead(reply.raw);
  }
  done();
}

function correctStreamHead(res: ServerResponse): void {
  const writeHead = res.writeHead.bind(res);
  const patched = (status: number, headers?: OutgoingHttpHeaders) =>
    writeHead(
      status,
      headers?.['content-type'] === SSE_CONTENT_TYPE
        ? { ...headers, 'content-type': JSON_ARRAY_CONTENT_TYPE }
        : headers,
    );
  // The stream writer calls writeHead(status, headers) only; the other overloads are never used on this reply.
  res.writeHead = patched as ServerResponse['writeHead'];
}
