// `POST /v1/ocr` in Mistral OCR's shape. The document URL goes to the provider as given: the gateway never fetches it.
import { z } from 'zod';
import { ocrOp } from '../../engine/ops/ocr.ts';
import { OcrRequest, type OcrResponse } from '../../schemas/ocr.ts';
import type { FormatOperation, WireFormat } from '../types.ts';
import { INFERENCE_ERRORS, jsonOperation } from './rerank.ts';

const OcrView = z.looseObject({
  pages: z.array(
    z.looseObject({
      index: z.number().int(),
      markdown: z.string(),
      images: z.array(z.looseObject({ id: z.string() })),
      dimensions: z.looseObject({ dpi: z.number(), height: z.number(), width: z.number() }).nullish(),
    }),
  ),
  model: z.string(),
  usage_info: z.looseObject({ pages_processed: z.number().int(), doc_size_bytes: z.number().int().nullish() }),
});

export function ocrOperation(format: WireFormat): FormatOperation<OcrRequest, OcrResponse, never> {
  return jsonOperation(format, OcrRequest, ocrOp, {
    operationId: 'createOcr',
    summary: 'Read a document or image into Markdown (OCR)',
    tags: ['OCR'],
    description:
      'model is `<provider>/<model>` (mistral). `document` is a `document_url`, an `image_url` or a provider ' +
      '`file` id, passed to the provider as given (the gateway does not fetch it). Billed by pages processed.',
    body: OcrRequest,
    bodyExamples: [
      {
        model: 'mistral/mistral-ocr-latest',
        document: { type: 'document_url', document_url: 'https://arxiv.org/pdf/2201.04234' },
      },
    ],
    responses: { 200: { description: 'Markdown per page with the gateway’s `extra_fields`', json: OcrView } },
    errors: INFERENCE_ERRORS,
  });
}
