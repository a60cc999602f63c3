// `/cloudconv`: the Bedrock runtime API (Converse, ConverseStream, InvokeModel, InvokeModelWithResponseStream,
// CountTokens). The model id is a path segment; the AWS SDKs percent-encode an ARN's `:` and `/` in it.
import { converseFormat } from '../../formats/converse/format.ts';
import { cloudconvOperations as ops } from '../../formats/converse/operations.ts';
import { registerInferenceRoute } from '../inference-route.ts';
import type { NativeRoutes } from './native-routes.ts';

const INVOKE_ROUTES = new Set(['/model/:modelId/invoke', '/model/:modelId/invoke-with-response-stream']);

export const cloudconvRoutes: NativeRoutes = {
  segment: 'cloudconv',
  format: converseFormat,
  register(f, rt) {
    // The AWS SDK sends an InvokeModel body without `contentType` as application/octet-stream, and Bedrock reads
    // it as JSON; so does the gateway, through its JSON parser and its body limit.
    f.addHook('onRequest', (request, _reply, done) => {
      const url = request.routeOptions.url ?? '';
      const type = request.headers['content-type'];
      if (type === 'application/octet-stream' && INVOKE_ROUTES.has(url.slice(url.indexOf('/model/')))) {
        request.headers['content-type'] = 'application/json';
      }
      done();
    });
    for (const path of ['/model/:modelId/converse', '/model/:modelId/converse-stream']) {
      registerInferenceRoute(f, rt, path, path.endsWith('-stream') ? ops.converseStream : ops.converse);
    }
    registerInferenceRoute(f, rt, '/model/:modelId/invoke', ops.invoke);
    registerInferenceRoute(f, rt, '/model/:modelId/invoke-with-response-stream', ops.invokeStream);
    registerInferenceRoute(f, rt, '/model/:modelId/count-tokens', ops.countTokens);
  },
};
