// Client settings `logging_headers` and `required_headers`, and the pure per-request work they ask for: the
// log metadata taken from a request's headers, and the first required header a request lacks.
import { headerNameList } from '../schemas/strings.ts';

type Headers = Record<string, string | string[] | undefined>;
/** A log row's `metadata`: header-derived key → value. */
export type LogMetadata = Record<string, string>;

/** A caller's own log labels: `x-gateway-lh-<key>: <value>` lands in the metadata under `<key>`. */
export const LOG_HEADER_PREFIX = 'x-gateway-lh-';
/** Entries one row keeps, configured headers first; later ones are left out. */
export const MAX_METADATA_ENTRIES = 32;
/** Characters of one value kept (a header can be up to the server's whole header limit). */
export const MAX_METADATA_VALUE_CHARS = 1024;
/** Names one list may hold. */
export const MAX_HEADER_LIST = 64;

/**
 * Headers that carry a credential here (or did in 1.4.x, where the value was a provider secret): never copied into
 * a log, which other people read. The WebSocket subprotocol carries a virtual key on /v1/realtime.
 */
const CREDENTIAL_HEADERS = new Set([
  'authorization',
  'proxy-authorization',
  'x-api-key',
  'x-goog-api-key',
  'api-key',
  'x-gateway-vk',
  'cookie',
  'set-cookie',
  'x-gateway-csrf',
  'sec-websocket-protocol',
  'x-gateway-azure-endpoint',
]);
const CREDENTIAL_PREFIXES = ['x-gateway-bedrock-'];

export function isCredentialHeader(name: string): boolean {
  const n = name.toLowerCase();
  return CREDENTIAL_HEADERS.has(n) || CREDENTIAL_PREFIXES.some((p) => n.startsWith(p));
}

export const LoggingHeaders = headerNameList({
  max: MAX_HEADER_LIST,
  maxChars: 128,
  refuse: (name) =>
    isCredentialHeader(name) ? `${name} carries a credential: it is never captured in logs` : undefined,
});
export const RequiredHeaders = headerNameList({ max: MAX_HEADER_LIST, maxChars: 128 });

/** The two client settings (spread into ClientConfig). */
export const LogHeaderFields = {
  /** Request headers copied into the log rows' `metadata` (besides every x-gateway-lh-*); never credentials. */
  logging_headers: LoggingHeaders,
  /** Inference requests lacking one of these headers are refused with 400 (management and probes are exempt). */
  required_headers: RequiredHeaders,
};

/**
 * The metadata of one request: the configured headers under their (lower-case) names, then every
 * `x-gateway-lh-<key>` under `<key>` (a label wins over a configured header of the same name, as in the
 * reference). Null when nothing was captured. Without configured headers this is one pass over the header names.
 */
export function logMetadata(headers: Headers | undefined, configured: readonly string[]): LogMetadata | null {
  if (headers === undefined) return null;
  let out: LogMetadata | null = null;
  let n = 0;
  for (const name of configured) {
    const v = headerValue(headers[name]);
    if (v === undefined) continue;
    out ??= emptyMetadata();
    out[name] = v;
    if (++n >= MAX_METADATA_ENTRIES) return out;
  }
  for (const name in headers) {
    // The third character ('g' of x-gateway-) first: it turns away the many x-stainless-*, x-forwarded-* and
    // plain headers without a string compare (a third of the cost of testing the 'x' first; test/bench/log-headers.ts).
    if (name.charCodeAt(2) !== 103 || name.length <= LOG_HEADER_PREFIX.length || !name.startsWith(LOG_HEADER_PREFIX)) {
      continue;
    }
    const v = headerValue(headers[name]);
    if (v === undefined) continue;
    const key = name.slice(LOG_HEADER_PREFIX.length);
    out ??= emptyMetadata();
    if (!(key in out) && ++n > MAX_METADATA_ENTRIES) break;
    out[key] = v;
  }
  return out;
}

// Without a prototype: a caller's `x-gateway-lh-__proto__` or `-constructor` is an ordinary key.
function emptyMetadata(): LogMetadata {
  return Object.create(null) as LogMetadata; // a plain string map; Object.create is typed `any`
}

function headerValue(v: string | string[] | undefined): string | undefined {
  if (v === undefined) return undefined;
  const s = typeof v === 'string' ? v : v.join(', ');
  return s.length > MAX_METADATA_VALUE_CHARS ? s.slice(0, MAX_METADATA_VALUE_CHARS) : s;
}

/** The first of `required` (lower-case names) the request does not carry; undefined when it carries them all. */
export function missingHeader(headers: Headers, required: readonly string[]): string | undefined {
  for (const name of required) if (headers[name] === undefined) return name;
  return undefined;
}
