// What the OAuth pages a browser opens (the callback page, the per-user consent pages) share: escaping, the
// hash-based CSP sources of their inline style and script, and the headers that keep them out of caches, frames
// and Referer headers (their URLs may be capabilities).
import { createHash } from 'node:crypto';

export interface HtmlPage {
  status: number;
  headers: Record<string, string>;
  body: string;
}

export function escapeHtml(s: string): string {
  return s.replace(/[&<>"'`=]/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** A CSP source admitting exactly this inline text (`'sha256-…'`). */
export function hashSource(inline: string): string {
  return `'sha256-${createHash('sha256').update(inline).digest('base64')}'`;
}

/** Never cached, never framed, never sniffed, no referrer; the page's own CSP. */
export function pageHeaders(csp: string): Record<string, string> {
  return {
    'content-type': 'text/html; charset=utf-8',
    'cache-control': 'no-store',
    pragma: 'no-cache',
    'content-security-policy': csp,
    'referrer-policy': 'no-referrer',
    'x-content-type-options': 'nosniff',
    'x-frame-options': 'DENY',
  };
}
