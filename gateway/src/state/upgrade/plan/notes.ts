// The report being written while the plan is made. Every step appends to the one sink the orchestrator passes
// in, so the summary lists objects in the order the rules ran, step by step.

import type { ReportEntry } from './types.ts';

export class Notes {
  readonly report: ReportEntry[] = [];
  /** Rows that cannot come across: the upgrade refuses to run while any exist. */
  readonly errors: string[] = [];

  /** A change made on the way, with the rule (Versioning, 1-7) behind it when one applies. */
  note(object: string, change: string, rule?: number): void {
    this.report.push({ object, change, level: 'info', ...(rule === undefined ? {} : { rule }) });
  }

  /** Something the 1.4.x store held that does not come across as it was. */
  warn(object: string, change: string): void {
    this.report.push({ object, change, level: 'warn' });
  }

  fail(object: string, why: string): void {
    this.errors.push(`${object}: ${why}`);
  }
}
