// Upstream error text reaches callers and the request log: it is cut to a bounded length and the configured key
// secrets are taken out first (an upstream may echo the credential it was sent, e.g. in "invalid API key: ...").
import { ProviderError } from '../errors.ts';
import type { ProviderKey } from '../types.ts';

/** Upstream error text kept for a caller or the log (4 KiB of text). */
export const MAX_ERROR_TEXT_CHARS = 4096;
/** An upstream error `type` or `code` is an identifier; anything longer is cut. */
const MAX_ERROR_ID_CHARS = 256;
/**
 * Shorter values are placeholders (`ollama`, `none`) rather than credentials; taking them out of messages would
 * only garble them.
 */
const MIN_SECRET_CHARS = 8;
/** Lines of a PEM private key body: each is secret material on its own. */
const MIN_PEM_LINE_CHARS = 16;
const REDACTED = '[REDACTED]';

const secretsByKey = new WeakMap<ProviderKey, readonly string[]>();
const secretsByKeyList = new WeakMap<readonly ProviderKey[], readonly string[]>();

/** Every secret a key holds, as written and as JSON or URL encoding would spell it; longest first. */
export function keySecrets(key: ProviderKey): readonly string[] {
  let out = secretsByKey.get(key);
  if (out === undefined) {
    const found = new Set<string>();
    const add = (v: string | undefined, min = MIN_SECRET_CHARS) => {
      if (v === undefined || v.length < min) return;
      found.add(v);
      found.add(JSON.stringify(v).slice(1, -1));
      found.add(encodeURIComponent(v));
    };
    add(key.value);
    const b = key.bedrock_key_config;
    if (b) {
      add(b.access_key);
      add(b.secret_key);
      add(b.session_token);
    }
    const credentials = key.vertex_key_config?.auth_credentials;
    if (credentials) {
      add(credentials);
      for (const v of credentialFields(credentials)) add(v);
      for (const line of pemBodyLines(credentials)) add(line, MIN_PEM_LINE_CHARS);
    }
    out = [...found].sort((x, y) => y.length - x.length);
    secretsByKey.set(key, out);
  }
  return out;
}

/** The secrets of several keys (all keys of one provider: the snapshot's list, so it is worked out once). */
export function secretsOf(keys: readonly ProviderKey[]): readonly string[] {
  let out = secretsByKeyList.get(keys);
  if (out === undefined) {
    const all = new Set<string>();
    for (const k of keys) for (const s of keySecrets(k)) all.add(s);
    out = [...all].sort((x, y) => y.length - x.length);
    secretsByKeyList.set(keys, out);
  }
  return out;
}

/** `text` without any of `secrets` (longest first, so a secret containing another goes whole). */
export function scrub(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const s of secrets) if (out.includes(s)) out = out.split(s).join(REDACTED);
  return out;
}

/**
 * Scrubbed, then cut to `max` characters with a marker saying so. NUL becomes U+FFFD: Postgres text and jsonb
 * cannot hold it, and one such row would stop the request log's batch.
 */
export function boundText(text: string, secrets: readonly string[], max = MAX_ERROR_TEXT_CHARS): string {
  let clean = scrub(text, secrets);
  if (clean.includes('\u0000')) clean = clean.split('\u0000').join('\ufffd');
  return clean.length <= max ? clean : `${clean.slice(0, max)}… (truncated)`;
}

/** The same error with its upstream-controlled text (message, type, code) scrubbed and bounded. */
export function redactError(err: ProviderError, secrets: readonly string[]): ProviderError {
  const message = boundText(err.message, secrets);
  const type = err.type === undefined ? undefined : boundText(err.type, secrets, MAX_ERROR_ID_CHARS);
  const code = err.code === undefined ? undefined : boundText(err.code, secrets, MAX_ERROR_ID_CHARS);
  if (message === err.message && type === err.type && code === err.code) return err;
  return new ProviderError(err.kind, message, {
    status: err.status,
    ...(type === undefined ? {} : { type }),
    ...(code === undefined ? {} : { code }),
    ...(err.retryAfter === undefined ? {} : { retryAfter: err.retryAfter }),
    cause: err.cause,
  });
}

/** Secret fields of a service-account or authorized-user JSON credential (none when it is not JSON). */
function credentialFields(credentials: string): string[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(credentials);
  } catch {
    return [];
  }
  if (!parsed || typeof parsed !== 'object') return [];
  const out: string[] = [];
  for (const name of ['private_key', 'private_key_id', 'client_secret', 'refresh_token']) {
    const v: unknown = Reflect.get(parsed, name);
    if (typeof v === 'string') out.push(v);
  }
  return out;
}

/** Base64 lines of any PEM block in `text`, whether its newlines are real or JSON-escaped. */
function pemBodyLines(text: string): string[] {
  return text
    .split(/\\n|\n/)
    .map((l) => l.trim())
    .filter((l) => /^[A-Za-z0-9+/=]+$/.test(l));
}
