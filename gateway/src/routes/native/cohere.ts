// `/cohere`: Cohere v2 chat (streamed or not), embed, rerank and v1 tokenize.
import { cohereFormat } from '../../formats/cohere/format.ts';
import { chatOperation, embedOperation, rerankOperation, tokenizeOperation } from '../../formats/cohere/operations.ts';
import { registerInferenceRoute } from '../inference-route.ts';
import type { NativeRoutes } from './native-routes.ts';

export const cohereRoutes: NativeRoutes = {
  segment: 'cohere',
  format: cohereFormat,
  register(f, rt) {
    registerInferenceRoute(f, rt, '/v2/chat', chatOperation);
    registerInferenceRoute(f, rt, '/v2/embed', embedOperation);
    registerInferenceRoute(f, rt, '/v2/rerank', rerankOperation);
    registerInferenceRoute(f, rt, '/v1/tokenize', tokenizeOperation);
  },
};
