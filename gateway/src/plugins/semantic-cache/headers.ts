// The per-request cache headers (pure): validated into settings, or a message naming the header. A bad value is
// a 400 in the caller's format, never a silent fall back to the defaults.

type Headers = Record<string, string | string[] | undefined>;

export const CACHE_HEADERS = {
  key: 'x-gateway-cache-key',
  ttl: 'x-gateway-cache-ttl',
  threshold: 'x-gateway-cache-threshold',
  type: 'x-gateway-cache-type',
  noStore: 'x-gateway-cache-no-store',
} as const;

/**
 * A cache key: 1..256 visible ASCII characters without `/ ? # %` and not `.` or `..`, so that
 * `DELETE /api/cache/clear-by-key/{cacheKey}` can always name it.
 */
export const CACHE_KEY_PATTERN = /^(?!\.{1,2}$)[!-"$&-.0-9:->@-~]{1,256}$/;
export const CACHE_KEY_RULE = '1 to 256 visible ASCII characters without / ? # % (and not . or ..)';
/** Longest TTL a request may ask for (a year, as the settings allow). */
export const MAX_TTL_SECONDS = 31_536_000;

export interface CacheHeaders {
  key: string | undefined;
  ttlSeconds: number | undefined;
  threshold: number | undefined;
  /** `direct`: the exact layer only; `semantic`: the semantic layer only; undefined: both. */
  type: 'direct' | 'semantic' | undefined;
  noStore: boolean;
}

export type HeaderResult = { ok: true; value: CacheHeaders } | { ok: false; error: string; header: string };

const UNITS: Record<string, number> = { s: 1, m: 60, h: 3600, d: 86_400 };

export function parseCacheHeaders(headers: Headers): HeaderResult {
  const fail = (header: string, why: string): HeaderResult => ({ ok: false, error: `${header}: ${why}`, header });
  const raw: Partial<Record<keyof typeof CACHE_HEADERS, string>> = {};
  for (const [field, name] of Object.entries(CACHE_HEADERS) as [keyof typeof CACHE_HEADERS, string][]) {
    const v = headers[name];
    if (Array.isArray(v)) return fail(name, 'give it once');
    if (v !== undefined) raw[field] = v;
  }
  const value: CacheHeaders = {
    key: undefined,
    ttlSeconds: undefined,
    threshold: undefined,
    type: undefined,
    noStore: false,
  };
  if (raw.key !== undefined) {
    if (!CACHE_KEY_PATTERN.test(raw.key)) return fail(CACHE_HEADERS.key, `a cache key is ${CACHE_KEY_RULE}`);
    value.key = raw.key;
  }
  if (raw.ttl !== undefined) {
    const m = /^(\d{1,9})([smhd]?)$/.exec(raw.ttl.trim());
    const seconds = m ? Number(m[1]) * (UNITS[m[2] || 's'] ?? 1) : Number.NaN;
    if (!(seconds >= 1 && seconds <= MAX_TTL_SECONDS)) {
      return fail(
        CACHE_HEADERS.ttl,
        `expected a whole number of seconds (or with s, m, h, d: 30s, 5m, 1h, 7d) from 1 s to ${MAX_TTL_SECONDS} s`,
      );
    }
    value.ttlSeconds = seconds;
  }
  if (raw.threshold !== undefined) {
    const t = /^\s*(?:0|1|0?\.\d+|[01]\.\d*)\s*$/.test(raw.threshold) ? Number(raw.threshold) : Number.NaN;
    if (!(t >= 0 && t <= 1)) return fail(CACHE_HEADERS.threshold, 'expected a number from 0 to 1 (e.g. 0.85)');
    value.threshold = t;
  }
  if (raw.type !== undefined) {
    const t = raw.type.trim().toLowerCase();
    if (t !== 'direct' && t !== 'semantic') return fail(CACHE_HEADERS.type, 'expected direct or semantic');
    value.type = t;
  }
  if (raw.noStore !== undefined) {
    const n = raw.noStore.trim().toLowerCase();
    if (n !== 'true' && n !== 'false') return fail(CACHE_HEADERS.noStore, 'expected true or false');
    value.noStore = n === 'true';
  }
  return { ok: true, value };
}
