// Small readings of 1.4.x columns shared by several steps.

import { json, type Raw, text } from '../store14.ts';
import type { Source } from './types.ts';

export const WILDCARD = '*';

export const sourceOf = (row: Raw): Source => (text(row['config_hash']) ? 'config' : 'api');

/** A list as the report prints it (and compares it). */
export const list = (v: string[]) => JSON.stringify(v);

/** A 1.4.x list column as strings; invalid JSON or a non-list is reported through `undefined`. */
export function stringList(v: unknown): string[] | undefined {
  const parsed = json(v);
  if (parsed === null) return [];
  if (!Array.isArray(parsed) || !parsed.every((x) => typeof x === 'string')) return undefined;
  return parsed;
}

/** Breaking change 4: no wildcard beside names, no duplicates. 1.4.x took both; the meaning is kept. */
export function tidyList(values: string[]): string[] {
  if (values.includes(WILDCARD)) return [WILDCARD];
  return [...new Set(values)];
}
