/** The message of anything thrown, for logs and envelopes (never the stack). */
export function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
