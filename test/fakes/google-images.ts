// Fake Google image upstream for both the Gemini API (`/v1beta/models/{model}:{method}`) and Vertex AI
// (`/v1/projects/{p}/locations/{r}/publishers/google/models/{model}:{method}`): Imagen `:predict` answers
// `predictions[{bytesBase64Encoded, mimeType}]`, a Gemini image model's `:generateContent` answers a candidate with
// a text part and an `inlineData` image part, with usage metadata (1290 image tokens, as Google bills one image).
// A `:predict` carrying `referenceImages` is an Imagen edit (imagen-edits.ts): checked against Google's documented
// shape and answered, or refused with Google's 400.
import { imagenEdit, isImagenEdit } from './imagen-edits.ts';
import { fakeImage } from './openai-images.ts';
import { FakeServer, sendJson } from './server.ts';

type Json = Record<string, unknown>;

export const GEMINI_IMAGE_TOKENS = 1290;

function modelOf(path: string): string {
  const m = /models\/([^/:]+):/.exec(path);
  return m ? decodeURIComponent(m[1]!) : 'unknown';
}

export function createGoogleImagesFake(): FakeServer {
  return new FakeServer([
    {
      method: 'POST',
      path: /:predict$/,
      handler: (req, res) => {
        const body = req.json as { instances?: Json[]; parameters?: Json };
        if (isImagenEdit(body)) return imagenEdit(modelOf(req.path), body, res);
        const prompt = String(body.instances?.[0]?.['prompt'] ?? '');
        const n = Number(body.parameters?.['sampleCount'] ?? 1);
        const ratio = String(body.parameters?.['aspectRatio'] ?? '1:1');
        const predictions = Array.from({ length: n }, (_, i) => ({
          mimeType: 'image/png',
          bytesBase64Encoded: fakeImage(`${modelOf(req.path)}:${prompt}:${ratio}:${i}`).toString('base64'),
        }));
        sendJson(res, 200, { predictions });
      },
    },
    {
      method: 'POST',
      path: /:generateContent$/,
      handler: (req, res) => {
        const body = req.json as { contents?: { parts?: Json[] }[] };
        const parts = body.contents?.[0]?.parts ?? [];
        const text = parts
          .map((p) => p['text'])
          .filter((t) => typeof t === 'string')
          .join(' ');
        const images = parts.filter((p) => p['inlineData']).length;
        sendJson(res, 200, {
          candidates: [
            {
              content: {
                role: 'model',
                parts: [
                  { text: 'Here is your image.' },
                  {
                    inlineData: {
                      mimeType: 'image/png',
                      data: fakeImage(`${modelOf(req.path)}:${text}:${images} images in`).toString('base64'),
                    },
                  },
                ],
              },
              finishReason: 'STOP',
            },
          ],
          usageMetadata: {
            promptTokenCount: 10 + 258 * images,
            candidatesTokenCount: GEMINI_IMAGE_TOKENS,
            totalTokenCount: 10 + 258 * images + GEMINI_IMAGE_TOKENS,
          },
        });
      },
    },
  ]);
}
