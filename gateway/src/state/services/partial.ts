// Partial updates (the reference's PUT semantics, issue 14): the stored resource's view merged with the body, then
// the resource's full validation and write. The body names what changes; a field it leaves out keeps its stored
// value, one it sets to null is cleared where the field takes null. Top-level fields are replaced whole (a
// `network_config`, `targets` or `budgets` in the body replaces the stored one), as in the reference.
//
// The view is read outside the write's transaction, so the write carries the view's `updated_at` and is refused
// as stale if the row changed in between; the merge is then redone on the newer row (two edits of different
// fields of one row both land).
import { isRecord } from '../../util/records.ts';
import { StateError } from '../errors.ts';
import { iso } from './key-record.ts';

/** How a resource's view maps back onto its input: view-only fields, and old input names of renamed fields. */
export interface MergeRules {
  /** Fields of the view that are not inputs (they are dropped from the stored side before the merge). */
  readOnly?: readonly string[];
  /** Old name -> current name: a body using the old name replaces the stored field of the current name. */
  aliases?: Readonly<Record<string, string>>;
  /** Fields of which one at most is set (a virtual key's team or customer): naming one clears the others. */
  exclusive?: readonly (readonly string[])[];
  /**
   * Singular name -> list name (a team's `budget` and its `budgets`): a body naming the singular replaces the
   * list with that one entry, merged into the stored entry when there is exactly one (so it keeps its id, and a
   * budget its usage); null empties the list.
   */
  singular?: Readonly<Record<string, string>>;
}

/** The write's precondition: the row still carries the `updated_at` its view was read with. */
export interface UpdateOptions {
  unchangedSince?: string;
}

/** The body with aliased fields under their current names (when the current name is not also given). */
export function renameAliases(body: Record<string, unknown>, aliases: MergeRules['aliases']): Record<string, unknown> {
  const out = { ...body };
  if (!aliases) return out;
  for (const [old, current] of Object.entries(aliases)) {
    if (!(old in out) || current in out) continue;
    out[current] = out[old];
    delete out[old];
  }
  return out;
}

/** The stored view (without its read-only fields) overlaid with the body. A body that is no object is left to the validation. */
export function mergeUpdate(stored: Record<string, unknown>, body: unknown, rules: MergeRules = {}): unknown {
  if (!isRecord(body)) return body;
  const base = { ...stored };
  for (const f of rules.readOnly ?? []) delete base[f];
  for (const [old] of Object.entries(rules.aliases ?? {})) delete base[old];
  const named = renameAliases(body, rules.aliases);
  for (const group of rules.exclusive ?? []) {
    if (group.some((f) => named[f] != null)) for (const f of group) if (!(f in named)) delete base[f];
  }
  for (const [one, list] of Object.entries(rules.singular ?? {})) {
    if (!(one in named) || list in named) continue;
    const stored = base[list];
    const only = Array.isArray(stored) && stored.length === 1 && isRecord(stored[0]) ? stored[0] : {};
    const entry = named[one];
    delete base[list];
    named[one] = isRecord(entry) ? { ...only, ...entry } : entry;
  }
  return { ...base, ...named };
}

/** A write refused because the row changed after its view was read (the partial update redoes its merge). */
export class StaleWrite extends StateError {
  constructor() {
    super('conflict', 'the resource changed while it was being updated; send the update again');
  }
}

/** Inside the write's transaction, after the row is locked: refuses the write if the row changed since the view. */
export function checkUnchanged(updatedAt: Date | string, opts: UpdateOptions | undefined): void {
  if (opts?.unchangedSince !== undefined && iso(updatedAt) !== opts.unchangedSince) throw new StaleWrite();
}

const ATTEMPTS = 5;

/**
 * PUT with the reference's semantics: reads the view, merges the body into it and writes the result through the
 * resource's own (full) validation, redoing the merge when another write got in between.
 */
export async function partialUpdate<T>(
  read: () => Promise<Record<string, unknown>>,
  write: (merged: unknown, opts: UpdateOptions) => Promise<T>,
  body: unknown,
  rules: MergeRules = {},
): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    const stored = await read();
    const since = typeof stored['updated_at'] === 'string' ? stored['updated_at'] : undefined;
    try {
      return await write(mergeUpdate(stored, body, rules), since === undefined ? {} : { unchangedSince: since });
    } catch (err) {
      if (err instanceof StaleWrite && attempt < ATTEMPTS) continue;
      throw err;
    }
  }
}
