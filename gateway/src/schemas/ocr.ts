// OCR in Mistral's shape (`POST /v1/ocr`): a document or image by URL (or an uploaded file's id at the provider)
// in, Markdown per page out. The gateway never fetches the URL: it goes to the provider as the caller gave it.
import { z } from 'zod';

export const OcrDocument = z.discriminatedUnion('type', [
  z.looseObject({
    type: z.literal('document_url'),
    document_url: z.string().min(1).describe('An https URL or a `data:application/pdf;base64,...` URL'),
    document_name: z.string().nullish(),
  }),
  z.looseObject({
    type: z.literal('image_url'),
    image_url: z.union([z.string().min(1), z.looseObject({ url: z.string().min(1) })]),
  }),
  z.looseObject({ type: z.literal('file'), file_id: z.string().min(1) }),
]);

export const OcrRequest = z.looseObject({
  model: z.string().min(1).describe('`<provider>/<model>`, e.g. `mistral/mistral-ocr-latest`'),
  document: OcrDocument,
  pages: z.array(z.number().int().min(0)).nullish().describe('Pages to read (0-based); all when absent'),
  include_image_base64: z.boolean().nullish(),
  image_limit: z.number().int().min(0).nullish(),
  image_min_size: z.number().int().min(0).nullish(),
  fallbacks: z.array(z.string()).optional(),
});
export type OcrRequest = z.infer<typeof OcrRequest>;

/** Mistral's answer: `pages[]` (`index`, `markdown`, `images`, `dimensions`), `model`, `usage_info`. */
export type OcrResponse = Record<string, unknown> & {
  pages: unknown[];
  usage_info?: { pages_processed?: number; doc_size_bytes?: number | null } & Record<string, unknown>;
};
