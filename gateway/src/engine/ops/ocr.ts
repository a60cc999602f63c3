// OCR: served by providers with a document OCR API (mistral); billed by the pages the provider processed.
import type { OcrRequest, OcrResponse } from '../../schemas/ocr.ts';
import type { OperationSpec } from '../operations.ts';

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
};
