// Usage broken down by modality (text, audio, image), as providers report it, checked before any of it is priced
// apart: a breakdown that does not add up to its total is not trusted (cost.ts then bills the total as before).
// Pure.
import type { ModalityTokens } from '../engine/operations.ts';

/** One total and its parts by modality; a part the provider did not report is undefined. */
export interface Breakdown {
  total: number;
  text?: number | undefined;
  audio?: number | undefined;
  image?: number | undefined;
}

/**
 * Whether the parts add up to the total: exactly when the text part is reported too (text + audio + image = total),
 * else within it (audio + image <= total, the rest being text). No token can then be counted in two parts.
 */
export function addsUp(b: Breakdown): boolean {
  const parts = (b.audio ?? 0) + (b.image ?? 0);
  return b.text === undefined ? parts <= b.total : b.text + parts === b.total;
}

/** A reported count: a non-negative safe integer, else undefined (not reported, or garbage). */
export function reported(v: unknown): number | undefined {
  return typeof v === 'number' && Number.isSafeInteger(v) && v >= 0 ? v : undefined;
}

/** The sum of two usages' tokens of one modality (a usage without them counts none). */
export function addModality(a: ModalityTokens | undefined, b: ModalityTokens | undefined): ModalityTokens | undefined {
  if (!a || !b) return a ?? b;
  return {
    prompt_tokens: (a.prompt_tokens ?? 0) + (b.prompt_tokens ?? 0),
    cached_read_tokens: (a.cached_read_tokens ?? 0) + (b.cached_read_tokens ?? 0),
    completion_tokens: (a.completion_tokens ?? 0) + (b.completion_tokens ?? 0),
  };
}
