// Messages of upstream failures as a person reads them: the SDK's and undici's errors wrap the reason
// (`fetch failed` ← `connect ECONNREFUSED ...`, or the SSRF guard's refusal) in `cause`.
import { McpAuthError } from '../types.ts';

/** `outer: inner: innermost`, each message once, bounded. */
export function describeError(err: unknown): string {
  const parts: string[] = [];
  let cur: unknown = err;
  for (let depth = 0; cur !== undefined && cur !== null && depth < 5; depth++) {
    let msg = cur instanceof Error ? cur.message : String(cur);
    // The SDK's transport errors carry the HTTP status in `code` only.
    const status = (cur as { code?: unknown }).code;
    if (typeof status === 'number' && status >= 400 && status < 600 && !msg.includes(String(status))) {
      msg = `HTTP ${status}: ${msg}`;
    }
    if (msg && !parts.some((p) => p.includes(msg))) parts.push(msg);
    cur = cur instanceof Error ? cur.cause : undefined;
  }
  const text = parts.join(': ') || 'unknown error';
  return text.length > 500 ? `${text.slice(0, 500)}…` : text;
}

/** The McpAuthError an upstream failure carries (a credential that could not be supplied), if any. */
export function authErrorOf(err: unknown): McpAuthError | undefined {
  let cur: unknown = err;
  for (let depth = 0; cur instanceof Error && depth < 5; depth++) {
    if (cur instanceof McpAuthError) return cur;
    cur = cur.cause;
  }
  return undefined;
}
