// Model configs (per-model governance) come across with their rate limit and budget as they were.

import { type Raw, text } from '../store14.ts';
import type { Limits } from './limits.ts';
import type { Notes } from './notes.ts';
import type { PlannedModelConfig } from './types.ts';

export function planModelConfigs(rows: Raw[], limits: Limits, notes: Notes): PlannedModelConfig[] {
  const out: PlannedModelConfig[] = [];
  for (const m of rows) {
    const id = String(m['id']);
    const provider = text(m['provider']);
    const object = `model config ${provider ?? '*'}/${m['model_name']}`;
    out.push({ id, modelName: String(m['model_name']), provider, rateLimit: limits.rateLimitOf(m, object) });
    limits.takeBudget(m, 'model_config_id', id, object);
    notes.note(object, 'carried over with its budget and rate limit');
  }
  return out;
}
