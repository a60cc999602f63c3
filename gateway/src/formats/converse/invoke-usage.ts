// Token usage of InvokeModel answers, whose bodies are each model family's own JSON. Bedrock's token-count
// headers are preferred (providers/bedrock/native.ts); these readers cover an answer without them. Pure.
import type { UsageSummary } from '../../engine/operations.ts';

type Json = Record<string, unknown>;

function obj(v: unknown): Json | undefined {
  // A parsed JSON object; members are read one by one.
  return v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Json) : undefined;
}

function num(v: unknown): number | undefined {
  return typeof v === 'number' && Number.isFinite(v) && v >= 0 ? v : undefined;
}

function summary(input: number, output: number): UsageSummary {
  return { prompt_tokens: input, completion_tokens: output, total_tokens: input + output };
}

/** Anthropic (`usage.input_tokens`), Nova (`usage.inputTokens`), Llama, Titan text and embeddings. */
export function invokeUsage(body: Json): UsageSummary | undefined {
  const u = obj(body['usage']);
  if (u) {
    const anthropicIn = num(u['input_tokens']);
    if (anthropicIn !== undefined) {
      const cached = (num(u['cache_read_input_tokens']) ?? 0) + (num(u['cache_creation_input_tokens']) ?? 0);
      return summary(anthropicIn + cached, num(u['output_tokens']) ?? 0);
    }
    const novaIn = num(u['inputTokens']);
    if (novaIn !== undefined) return summary(novaIn, num(u['outputTokens']) ?? 0);
  }
  const llamaIn = num(body['prompt_token_count']);
  if (llamaIn !== undefined) return summary(llamaIn, num(body['generation_token_count']) ?? 0);
  const titanIn = num(body['inputTextTokenCount']);
  if (titanIn !== undefined) {
    const results = Array.isArray(body['results']) ? body['results'] : [];
    return summary(
      titanIn,
      results.reduce<number>((n, r) => n + (num(obj(r)?.['tokenCount']) ?? 0), 0),
    );
  }
  return undefined;
}

/** A streamed `chunk` event: Bedrock adds `amazon-bedrock-invocationMetrics` to the last chunk's JSON. */
export function invokeStreamUsage(chunk: Json): UsageSummary | undefined {
  const bytes = chunk['bytes'];
  if (typeof bytes !== 'string') return undefined;
  let payload: Json | undefined;
  try {
    payload = obj(JSON.parse(Buffer.from(bytes, 'base64').toString('utf8')));
  } catch {
    return undefined;
  }
  const m = obj(payload?.['amazon-bedrock-invocationMetrics']);
  const input = num(m?.['inputTokenCount']);
  if (input === undefined) return undefined;
  return summary(input, num(m?.['outputTokenCount']) ?? 0);
}
