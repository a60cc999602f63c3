// The kinds of string the management API and config.json take, each one small zod schema, so that every input
// schema refuses the same characters for the same reason:
// - Postgres text and jsonb cannot hold NUL at all, and jsonb refuses a lone UTF-16 surrogate: either turned a
//   create into a 500 from the database.
// - A control character in a name ends up in logs, headers and terminals; CR/LF split lines.
// - A provider key value is sent as an HTTP header value: CR, LF or NUL there fail every request routed to it.
// C1 controls (U+0080-U+009F) are refused with the C0 ones: no field has a use for them and some terminals act
// on them (U+009B is CSI).
import { z } from 'zod';

/** What a field of each kind may not contain beyond the controls every kind refuses. */
export type StringKind =
  /** One line: no control character at all (TAB, CR and LF included). */
  | 'line'
  /** Free text (descriptions, CEL expressions, credential JSON): TAB, LF and CR allowed, other controls not. */
  | 'text'
  /** An HTTP header value: visible ASCII with inner spaces, nothing else (no tab: legal, but never meant). */
  | 'header';

const TAB = 0x09;
const LF = 0x0a;
const CR = 0x0d;

/** `U+0000`: how a refused character is named in messages (never the character itself). */
export function codePointName(code: number): string {
  return `U+${code.toString(16).toUpperCase().padStart(4, '0')}`;
}

function isControl(code: number): boolean {
  return code < 0x20 || (code >= 0x7f && code <= 0x9f);
}

/** Why `s` is not a string of `kind`, or undefined when it is. Pure; the schemas below and path checks share it. */
export function stringIssue(s: string, kind: StringKind): string | undefined {
  for (let i = 0; i < s.length; i++) {
    const code = s.charCodeAt(i);
    if (kind === 'header') {
      if (code === 0x20) {
        if (i === 0 || i === s.length - 1) return 'must not start or end with a space';
        continue;
      }
      if (code < 0x21 || code > 0x7e) {
        return `must be visible ASCII characters (found ${codePointName(code)} at position ${i})`;
      }
      continue;
    }
    if (isControl(code)) {
      if (kind === 'text' && (code === TAB || code === LF || code === CR)) continue;
      const what =
        kind === 'line' ? 'control characters or line breaks' : 'control characters other than tab and line breaks';
      return `must not contain ${what} (found ${codePointName(code)} at position ${i})`;
    }
    // A high surrogate followed by a low one is one character; anything else is not Unicode text.
    if (code >= 0xd800 && code <= 0xdbff) {
      const next = s.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) {
        i++;
        continue;
      }
      return `must be valid Unicode text (found an unpaired surrogate ${codePointName(code)} at position ${i})`;
    }
    if (code >= 0xdc00 && code <= 0xdfff) {
      return `must be valid Unicode text (found an unpaired surrogate ${codePointName(code)} at position ${i})`;
    }
  }
  return undefined;
}

function ofKind(kind: StringKind, min: number, max: number, trim = false) {
  // Characters are checked before trimming: a name ending in CR/LF is refused, not silently cut.
  const checked = z.string().superRefine((s, ctx) => {
    const issue = stringIssue(s, kind);
    if (issue) ctx.addIssue({ code: 'custom', message: issue });
  });
  return (trim ? checked.trim() : checked).min(min).max(max);
}

/** A name, a model, a region, a list entry: one line of 1..max characters (after trimming, with `trim`). */
export function nameString(max = 128, opts: { trim?: boolean } = {}) {
  return ofKind('line', 1, max, opts.trim);
}

/**
 * Ids are used in URL paths and headers (x-gateway-key-id): letters, digits, `.`, `_`, `:` and `-`; not `.` or
 * `..`, which a path cannot address (dot segments are removed before routing).
 */
export const ID_PATTERN = /^(?!\.{1,2}$)[A-Za-z0-9._:-]+$/;
export function idString(max = 128) {
  return z.string().min(1).max(max).regex(ID_PATTERN, 'ids are letters, digits, ., _, : and - (not . or ..)');
}

/** Free text that may span lines: a description, a CEL expression, credential JSON. */
export function textString(max = 4096, min = 0) {
  return ofKind('text', min, max);
}

/** A value sent as an HTTP header value (a provider key, an access key, an extra header). */
export function headerValueString(max = 8192, min = 0) {
  return ofKind('header', min, max);
}

/** RFC 9110 token characters: an HTTP header name. */
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
export function headerNameString(max = 256) {
  return z.string().min(1).max(max).regex(HEADER_NAME, 'header names are RFC 9110 token characters');
}

/**
 * A list of header names, stored lower-cased and without repeats (Node lower-cases incoming header names, so the
 * lists match case-insensitively); `refuse` says why a name may not be listed.
 */
export function headerNameList(opts: {
  max: number;
  maxChars?: number;
  refuse?: (name: string) => string | undefined;
}) {
  const { refuse } = opts;
  return z
    .array(headerNameString(opts.maxChars))
    .max(opts.max)
    .superRefine((names, ctx) => {
      if (refuse === undefined) return;
      names.forEach((name, i) => {
        const why = refuse(name);
        if (why) ctx.addIssue({ code: 'custom', path: [i], message: why });
      });
    })
    .transform((names) => [...new Set(names.map((n) => n.toLowerCase()))])
    .default([]);
}

/**
 * An http(s) URL stored as written: no whitespace or control characters, which the URL parser would silently
 * drop (the stored value would not be the one used) and which Postgres jsonb may not hold.
 */
export function httpUrlString(max = 2048) {
  // Checked before z.url, which trims what it parses.
  return ofKind('header', 1, max).pipe(z.url({ protocol: /^https?$/, error: 'must be an http(s) URL' }));
}

/** A JSON object of at most `maxEntries` entries, keys and values checked by their schemas. */
export function boundedRecord<K extends z.ZodType<string>, V extends z.ZodType>(key: K, value: V, maxEntries: number) {
  return z.record(key, value).superRefine((m, ctx) => {
    const n = Object.keys(m).length;
    if (n > maxEntries) ctx.addIssue({ code: 'custom', message: `at most ${maxEntries} entries (got ${n})` });
  });
}

/** A map of names to values (aliases, deployments): at most `maxEntries`, each side one line. */
export function nameMap(maxEntries = 1000, maxKey = 256, maxValue = 1024) {
  return boundedRecord(nameString(maxKey), nameString(maxValue), maxEntries);
}
