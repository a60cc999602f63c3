// Allow-lists (spec, breaking changes 1 and 4): empty denies all, ["*"] allows all,
// and `*` mixed with other values or duplicate values are rejected.
import { z } from 'zod';
import { nameString } from '../schemas/strings.ts';

export const WILDCARD = '*';

export function allowListIssue(values: readonly string[]): string | undefined {
  if (values.includes(WILDCARD) && values.length > 1)
    return `"*" must stand alone; it cannot be mixed with other values`;
  const seen = new Set<string>();
  for (const v of values) {
    if (seen.has(v)) return `duplicate value "${v}"`;
    seen.add(v);
  }
  return undefined;
}

/** An allow-list field; `name` appears in the error message. Omitted means empty (deny all). */
export function allowList(name: string) {
  return z
    .array(nameString(256))
    .max(1000)
    .default([])
    .superRefine((values, ctx) => {
      const issue = allowListIssue(values);
      if (issue) ctx.addIssue({ code: 'custom', message: `${name}: ${issue}` });
    });
}

export function allows(list: readonly string[], value: string): boolean {
  return list[0] === WILDCARD || list.includes(value);
}
