// Mistral OCR (`POST /v1/ocr`): the request goes as the caller sent it, model rewritten; the document URL is
// Mistral's to fetch (the gateway never does). The answer passes through: pages of Markdown and `usage_info`.
import type { OcrRequest, OcrResponse } from '../../schemas/ocr.ts';
import { isRecord } from '../../util/records.ts';
import { ProviderError } from '../errors.ts';
import { upstreamBody } from '../openai/body.ts';
import { apiRoot, type OpenAIStyleEndpoints } from '../openai/endpoints.ts';
import { parseOpenAIError } from '../openai/errors.ts';
import { sendJson } from '../shared/http.ts';
import type { CallContext } from '../types.ts';

export async function mistralOcr(
  ep: OpenAIStyleEndpoints,
  baseUrl: string,
  req: OcrRequest,
  ctx: CallContext,
): Promise<OcrResponse> {
  const url = `${apiRoot(ctx.network.base_url ?? baseUrl, '/v1')}/ocr`;
  const body = upstreamBody(req, ep.bodyModel(ctx), 'once');
  const res = await sendJson<unknown>(ctx, { url, headers: ep.headers(ctx.key), body }, parseOpenAIError);
  if (!isRecord(res) || !Array.isArray(res['pages'])) {
    throw new ProviderError('bad_response', `${ctx.provider} OCR answer has no pages`);
  }
  // Checked above: an object with a `pages` array; the rest passes through as Mistral sent it.
  return res as OcrResponse;
}
