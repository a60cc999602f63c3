// Upstream URLs are built from names a caller or a config chose (models, deployments, aliases): each piece is
// encoded as one path segment, and a URL whose path the WHATWG parser would rewrite is never sent. The engine
// refuses such model names up front (engine/model-ref.ts); this is the second line, for every provider.
import { ProviderError } from '../errors.ts';

/**
 * Characters the WHATWG parser drops or reinterprets in a URL (C0 controls, space, DEL: stripped or removed;
 * `\`: a slash in http(s) URLs; `#`: starts the fragment, which is never sent). None appears in a URL we build.
 */
function rewritten(url: string): boolean {
  for (let i = 0; i < url.length; i++) {
    const c = url.charCodeAt(i);
    if (c <= 0x20 || c === 0x7f || c === 0x5c || c === 0x23) return true;
  }
  return false;
}

/** `.`, `..` and their percent-encoded spellings, which the parser resolves away with the segment before them. */
const DOT_SEGMENT = /^(?:\.|%2e){1,2}$/i;

/** One path segment: percent-encoded, and never a dot segment or empty (those change which path is called). */
export function pathSegment(value: string): string {
  if (value === '' || DOT_SEGMENT.test(value)) {
    throw new ProviderError('invalid_request', `"${value}" cannot be a segment of an upstream URL path`);
  }
  return encodeURIComponent(value);
}

/** A name that may span segments (`tunedModels/x`, `publishers/google/models/y`): each one through pathSegment. */
export function pathSegments(value: string): string {
  return value.split('/').map(pathSegment).join('/');
}

/**
 * Refuses a URL whose path the parser would not send as written: a dot segment (after `/`, `\` or at the start),
 * or a character that `rewritten` finds. Called on each distinct URL before it is parsed for a call.
 */
export function checkUpstreamUrl(url: string): void {
  if (rewritten(url)) {
    throw new ProviderError('invalid_request', 'upstream URL contains a character that would change where it points');
  }
  const authority = url.indexOf('//');
  const pathStart = authority === -1 ? 0 : url.indexOf('/', authority + 2);
  if (pathStart === -1) return;
  const query = url.indexOf('?', pathStart);
  const path = query === -1 ? url.slice(pathStart) : url.slice(pathStart, query);
  for (const segment of path.split('/')) {
    if (DOT_SEGMENT.test(segment)) {
      throw new ProviderError('invalid_request', 'upstream URL contains a dot segment that would change its path');
    }
  }
}
