// `GET /models`, normalized: compatible servers differ in the envelope (`{data: [...]}` or a bare array) and in
// which fields they fill.
import type { ModelInfo } from '../../schemas/models.ts';
import type { OpenAIStyleEndpoints } from './endpoints.ts';
import { type CallCtx, callJson } from './request.ts';

export async function listModels(ep: OpenAIStyleEndpoints, owner: string, ctx: CallCtx): Promise<ModelInfo[]> {
  const raw = await callJson<unknown>(
    ep,
    'models',
    ctx,
    undefined,
    (v) => Array.isArray(v) || Array.isArray(v['data']),
  );
  return toModelInfos(raw, owner);
}

/** Entries without a string `id` are skipped; `owned_by` falls back to the provider name. */
export function toModelInfos(raw: unknown, owner: string): ModelInfo[] {
  // `raw` is an object when not an array; only its optional `data` is read
  const list: unknown = Array.isArray(raw)
    ? raw
    : raw && typeof raw === 'object'
      ? (raw as { data?: unknown }).data
      : [];
  if (!Array.isArray(list)) return [];
  const out: ModelInfo[] = [];
  for (const item of list) {
    if (!item || typeof item !== 'object') continue;
    // a non-null object; each field is type-checked before use
    const m = item as Record<string, unknown>;
    if (typeof m['id'] !== 'string') continue;
    out.push({
      id: m['id'],
      object: 'model',
      created: typeof m['created'] === 'number' ? m['created'] : 0,
      owned_by: typeof m['owned_by'] === 'string' ? m['owned_by'] : owner,
    });
  }
  return out;
}
