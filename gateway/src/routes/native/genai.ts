// `/genai`: the Gemini API. `POST /v1beta/models/{model}:{method}` (and `/v1/...`, where a client configured with
// `apiVersion: 'v1'` sends it): one route per version takes every method, as the method sits after a colon in the
// last segment, which fastify cannot route on; the format's decoder splits it off (404 for an unknown method).
import { genaiFormat } from '../../formats/genai/format.ts';
import { modelsCall } from '../../formats/genai/operations.ts';
import { registerInferenceRoute } from '../inference-route.ts';
import { registerGenaiFiles } from './genai-files.ts';
import { registerGenaiModelList } from './genai-models.ts';
import type { NativeRoutes } from './native-routes.ts';

export const genaiRoutes: NativeRoutes = {
  segment: 'genai',
  format: genaiFormat,
  carriers: { headers: ['x-goog-api-key'], query: 'key' },
  register(f, rt) {
    for (const version of ['v1beta', 'v1']) {
      const suffix = version === 'v1' ? 'V1' : '';
      const op = { ...modelsCall, doc: { ...modelsCall.doc, operationId: `${modelsCall.doc.operationId}${suffix}` } };
      registerInferenceRoute(f, rt, `/${version}/models/*`, op);
      registerGenaiModelList(f, rt, version, suffix);
      registerGenaiFiles(f, rt, version);
    }
  },
};
