import type { z } from 'zod';
import { stringIssue } from '../schemas/strings.ts';

/** `a.b[0].c`: a JSON path as messages and `param` write it. */
export function pathText(path: readonly PropertyKey[], prefix = ''): string {
  return path.reduce<string>(
    (acc, seg) => (typeof seg === 'number' ? `${acc}[${seg}]` : acc ? `${acc}.${segment(seg)}` : segment(seg)),
    prefix,
  );
}

/** A record key as a path segment; a hostile key (controls, very long) is quoted and cut, never echoed raw. */
function segment(seg: PropertyKey): string {
  const s = String(seg);
  if (s.length <= 64 && stringIssue(s, 'line') === undefined) return s;
  return JSON.stringify(s.slice(0, 64)) + (s.length > 64 ? '…' : '');
}

/** `a.b[0].c: message` for each issue: the JSON path and what was expected. */
export function formatIssues(error: z.ZodError, prefix = ''): string {
  return error.issues.map((i) => `${pathText(i.path, prefix) || '(root)'}: ${messageOf(i)}`).join('; ');
}

/** A record key's issue says only "Invalid key in record": name what is wrong with the key. */
function messageOf(issue: z.core.$ZodIssue): string {
  if (issue.code !== 'invalid_key') return issue.message;
  return `invalid key: ${issue.issues.map((i) => i.message).join('; ')}`;
}

/** The field the first issue is about (an unknown key names that key), or undefined for the root. */
export function issueParam(error: z.ZodError, prefix = ''): string | undefined {
  const first = error.issues[0];
  if (!first) return undefined;
  const path = [...first.path, ...(first.code === 'unrecognized_keys' ? first.keys.slice(0, 1) : [])];
  return pathText(path, prefix) || undefined;
}
