import type { z } from 'zod';

/** `a.b[0].c: message` for each issue: the JSON path and what was expected. */
export function formatIssues(error: z.ZodError, prefix = ''): string {
  return error.issues
    .map((i) => {
      const path = i.path.reduce<string>(
        (acc, seg) => (typeof seg === 'number' ? `${acc}[${seg}]` : acc ? `${acc}.${String(seg)}` : String(seg)),
        prefix,
      );
      return `${path || '(root)'}: ${i.message}`;
    })
    .join('; ');
}
