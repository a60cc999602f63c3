// OCR: served by providers with a document OCR API (mistral); billed by the pages the provider processed.
import type { OcrRequest, OcrResponse } from '../../schemas/ocr.ts';
import type { OperationSpec } from '../operations.ts';
import { ocrReferences } from '../referenced-resources.ts';

/**
 * Pages reserved when the request does not list them: the document's length is unknown until the provider read
 * it. An image is one page.
 */
export const OCR_PAGES_ALLOWANCE = 100;

export const ocrOp: OperationSpec<OcrRequest, OcrResponse, never> = {
  requestType: 'ocr',
  label: 'OCR',
  unary: (a) => {
    const fn = a.ocr;
    return fn && ((req, ctx) => fn.call(a, req, ctx));
  },
  usage: (res) => {
    const processed = res.usage_info?.pages_processed;
    const pages = typeof processed === 'number' && processed >= 0 ? processed : res.pages.length;
    return { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0, units: { pages } };
  },
  estimateUnits: (req) => ({
    pages: req.document.type === 'image_url' ? 1 : (req.pages?.length ?? OCR_PAGES_ALLOWANCE),
  }),
  references: ocrReferences,
};
