// The request target in one normal form, computed once before routing, so that the router, the route's
// authentication and the logs all see the same path (RFC 9112 section 3.2, RFC 3986 section 6.2.2).
// Pure: no fastify, no I/O.

export type TargetResult = { ok: true; url: string } | { ok: false; error: string };

/** Fast path: an origin-form target with no percent sign, dot segment candidate or repeated slash. */
const NEEDS_WORK = /%|\/\.|\/\/|\\/;
const ABSOLUTE_FORM = /^[a-z][a-z0-9+.-]*:\/\/[^/?#]*/i;
const UNRESERVED = /[A-Za-z0-9._~-]/;

/**
 * Absolute-form (`http://host/path`) becomes origin-form; in the path, percent-encoded unreserved
 * characters are decoded, dot segments removed and repeated slashes collapsed. Reserved characters stay
 * encoded (`%2F` is data inside a segment, not a separator). The query is left as sent.
 * Asterisk-form, authority-form, fragments, backslashes and broken percent escapes are refused.
 */
export function normaliseTarget(raw: string): TargetResult {
  let target = raw;
  if (target.charCodeAt(0) !== 0x2f /* / */) {
    const m = ABSOLUTE_FORM.exec(target);
    if (!m) return { ok: false, error: 'request target must be a path (origin-form) or an absolute URL' };
    const scheme = m[0].slice(0, m[0].indexOf(':')).toLowerCase();
    if (scheme !== 'http' && scheme !== 'https') {
      return { ok: false, error: `request target scheme ${scheme} is not http or https` };
    }
    target = target.slice(m[0].length);
    if (target === '' || target.charCodeAt(0) === 0x3f /* ? */) target = `/${target}`;
  }
  const q = target.indexOf('?');
  const path = q === -1 ? target : target.slice(0, q);
  const query = q === -1 ? '' : target.slice(q);
  if (path.includes('#')) return { ok: false, error: 'request target must not carry a fragment' };
  if (!NEEDS_WORK.test(path)) return { ok: true, url: target };
  if (path.includes('\\')) return { ok: false, error: 'request path must not contain a backslash' };
  const decoded = decodeUnreserved(path);
  if (decoded === undefined) return { ok: false, error: 'request path has a malformed percent escape' };
  return { ok: true, url: removeDotSegments(decoded.replace(/\/{2,}/g, '/')) + query };
}

/** Decodes `%XX` only where XX is an unreserved character; other escapes are kept, upper-cased. */
function decodeUnreserved(path: string): string | undefined {
  if (!path.includes('%')) return path;
  let out = '';
  let i = 0;
  while (i < path.length) {
    const c = path[i];
    if (c !== '%') {
      out += c;
      i++;
      continue;
    }
    const hex = path.slice(i + 1, i + 3);
    if (!/^[0-9A-Fa-f]{2}$/.test(hex)) return undefined;
    const ch = String.fromCharCode(Number.parseInt(hex, 16));
    out += UNRESERVED.test(ch) ? ch : `%${hex.toUpperCase()}`;
    i += 3;
  }
  return out;
}

/** RFC 3986 section 5.2.4 over an absolute path. */
function removeDotSegments(path: string): string {
  const segments = path.split('/');
  const out: string[] = [];
  for (let i = 1; i < segments.length; i++) {
    const s = segments[i] as string;
    const last = i === segments.length - 1;
    if (s === '.' || s === '..') {
      if (s === '..') out.pop();
      if (last) out.push('');
      continue;
    }
    out.push(s);
  }
  return `/${out.join('/')}`;
}
