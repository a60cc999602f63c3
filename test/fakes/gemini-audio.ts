// Fake Gemini TTS (`models/{model}:generateContent` with `responseModalities: ["AUDIO"]`, Gemini API and Vertex AI
// paths): answers the PCM it would speak for the prompt as base64 inline data, `audio/L16;codec=pcm;rate=24000`.
import { FakeServer, sendJson } from './server.ts';

type Json = Record<string, unknown>;

/** The 16-bit PCM the fake answers for a prompt text. */
export function fakePcm(text: string): Buffer {
  return Buffer.from(`PCM:${text}`.repeat(8));
}

export function createGeminiAudioFake(): FakeServer {
  return new FakeServer([
    {
      method: 'POST',
      path: /:generateContent$/,
      handler: (req, res) => {
        const body = (req.json ?? {}) as Json;
        const config = (body['generationConfig'] ?? {}) as Json;
        const modalities = config['responseModalities'];
        const text = ((body['contents'] as Json[] | undefined)?.[0]?.['parts'] as Json[] | undefined)?.[0]?.['text'];
        if (!Array.isArray(modalities) || !modalities.includes('AUDIO') || typeof text !== 'string') {
          return sendJson(res, 400, {
            error: { code: 400, message: 'AUDIO modality and text are required', status: 'INVALID_ARGUMENT' },
          });
        }
        sendJson(res, 200, {
          candidates: [
            {
              content: {
                role: 'model',
                parts: [
                  {
                    inlineData: { mimeType: 'audio/L16;codec=pcm;rate=24000', data: fakePcm(text).toString('base64') },
                  },
                ],
              },
              finishReason: 'STOP',
            },
          ],
          usageMetadata: { promptTokenCount: 6, candidatesTokenCount: 150, totalTokenCount: 156 },
        });
      },
    },
  ]);
}
