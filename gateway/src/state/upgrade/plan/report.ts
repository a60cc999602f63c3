// The plan's summary as text, for the dry run.

import type { Plan } from './types.ts';

/** The summary, one line per object and change (never a secret value). */
export function formatReport(plan: Plan): string[] {
  const lines = plan.report.map(
    (e) =>
      `${e.level === 'warn' ? 'WARN ' : ''}${e.object}: ${e.change}${e.rule === undefined ? '' : ` (rule ${e.rule})`}`,
  );
  for (const e of plan.errors) lines.push(`ERROR ${e}`);
  return lines;
}
