// `/cloudconv`: the Bedrock runtime API (Converse, ConverseStream, InvokeModel, InvokeModelWithResponseStream,
// CountTokens). The model id is a path segment; the AWS SDKs percent-encode an ARN's `:` and `/` in it.

import { converseFormat } from '../../formats/converse/format.ts';
import { cloudconvOperations as ops } from '../../formats/converse/operations.ts';
import { registerInferenceRoute } from '../inference-route.ts';
import type { NativeRoutes } from './native-routes.ts';

export const cloudconvRoutes: NativeRoutes = {
  segment: 'cloudconv',
  format: converseFormat,
  register(f, rt) {
    registerInferenceRoute(f, rt, '/model/:modelId/converse', ops.converse);
    registerInferenceRoute(f, rt, '/model/:modelId/converse-stream', ops.converseStream);
    registerInferenceRoute(f, rt, '/model/:modelId/invoke', ops.invoke);
    registerInferenceRoute(f, rt, '/model/:modelId/invoke-with-response-stream', ops.invokeStream);
    registerInferenceRoute(f, rt, '/model/:modelId/count-tokens', ops.countTokens);
  },
};
