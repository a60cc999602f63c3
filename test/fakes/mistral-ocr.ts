// Fake Mistral OCR (`POST /v1/ocr`): one Markdown page per requested page (3 pages when none are named), in
// Mistral's answer shape with `usage_info`. It never fetches the document URL: it only echoes it.
import { FakeServer, sendJson } from './server.ts';

type Json = Record<string, unknown>;

export function createMistralOcrFake(): FakeServer {
  return new FakeServer([
    {
      method: 'POST',
      path: '/v1/ocr',
      handler: (req, res) => {
        const body = (req.json ?? {}) as Json;
        const doc = body['document'] as Json | undefined;
        const source = doc?.['document_url'] ?? doc?.['image_url'];
        if (typeof body['model'] !== 'string' || source === undefined) {
          return sendJson(res, 422, {
            object: 'error',
            message: 'model and document are required',
            type: 'invalid_request',
          });
        }
        const pages = Array.isArray(body['pages']) ? (body['pages'] as number[]) : [0, 1, 2];
        sendJson(res, 200, {
          pages: pages.map((index) => ({
            index,
            markdown: `# Page ${index + 1}\n\nRead from ${JSON.stringify(source)}`,
            images: body['include_image_base64'] ? [{ id: `img-${index}.jpeg`, image_base64: 'aGVsbG8=' }] : [],
            dimensions: { dpi: 200, height: 2200, width: 1700 },
          })),
          model: body['model'],
          document_annotation: null,
          usage_info: { pages_processed: pages.length, doc_size_bytes: 12345 },
        });
      },
    },
  ]);
}
