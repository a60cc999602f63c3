// One Gemini API model call as the engine runs it: the method and its validated native body.
import type { UsageSummary } from '../../engine/operations.ts';
import type { JsonObject } from '../../providers/types.ts';
import type {
  BatchEmbedContentsRequest,
  CountTokensRequest,
  EmbedContentRequest,
  GenerateContentRequest,
} from './schema.ts';

/** `streamGenerateContent` is `generateContent` streamed; `sse`: the caller asked for `alt=sse`. */
export type GenaiCall =
  | { action: 'generateContent'; body: GenerateContentRequest; sse: boolean }
  | { action: 'embedContent'; body: EmbedContentRequest }
  | { action: 'batchEmbedContents'; body: BatchEmbedContentsRequest }
  | { action: 'countTokens'; body: CountTokensRequest };

export interface GenaiResult {
  body: JsonObject;
  usage: UsageSummary | undefined;
}
