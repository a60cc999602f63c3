// Fake Bedrock InvokeModel for Titan Image Generator and Nova Canvas (`POST /model/{id}/invoke`), SigV4-checked
// like the Bedrock fake: TEXT_IMAGE, IMAGE_VARIATION and INPAINTING answer `{images: [base64...]}`, one per
// `imageGenerationConfig.numberOfImages`; an unknown task type is Bedrock's ValidationException.
import { verifySignature } from './bedrock.ts';
import { fakeImage } from './openai-images.ts';
import { FakeServer, sendJson } from './server.ts';

type Json = Record<string, unknown>;

export function createBedrockImagesFake(init: { accessKey: string; secretKey: string }): FakeServer {
  const options = { gapMs: 0, ...init };
  return new FakeServer([
    {
      method: 'POST',
      path: /^\/model\/[^/]+\/invoke$/,
      handler: async (req, res) => {
        const auth = await verifySignature(options, req);
        if (auth) return sendJson(res, 403, { message: auth.message }, { 'x-amzn-errortype': auth.type });
        const body = (req.json ?? {}) as Json;
        const task = String(body['taskType']);
        const config = (body['imageGenerationConfig'] ?? {}) as Json;
        const params = (body['textToImageParams'] ?? body['imageVariationParams'] ?? body['inPaintingParams']) as
          | Json
          | undefined;
        if (!['TEXT_IMAGE', 'IMAGE_VARIATION', 'INPAINTING'].includes(task) || !params) {
          return sendJson(
            res,
            400,
            { message: `unsupported taskType ${task}` },
            { 'x-amzn-errortype': 'ValidationException' },
          );
        }
        const model = decodeURIComponent(req.path.split('/')[2] ?? '');
        const n = Number(config['numberOfImages'] ?? 1);
        const images = Array.from({ length: n }, (_, i) =>
          fakeImage(`${model}:${task}:${String(params['text'] ?? '')}:${String(config['quality'])}:${i}`).toString(
            'base64',
          ),
        );
        sendJson(res, 200, { images, error: null });
      },
    },
  ]);
}
