// The per-user consent page: plain server-rendered HTML (no script, one hashed inline style), every value
// escaped. Pure: a flow's view in, status + headers + body out. The page is public and its URL (the flow id) is
// the capability, so it shows no secret and nothing beyond the MCP client and the identity being authorized.
import type { FlowRecord } from '../../../state/services/oauth/per-user-flows.ts';
import { escapeHtml, type HtmlPage, hashSource, pageHeaders } from '../html.ts';

export { escapeHtml, type HtmlPage };

const STYLE =
  'body{font-family:system-ui,sans-serif;max-width:36rem;margin:3rem auto;padding:0 1rem;color:#1f2328}' +
  'h1{font-size:1.4rem}.state{padding:.75rem 1rem;border-radius:6px;background:#f6f8fa}' +
  'a.button{display:inline-block;padding:.6rem 1.2rem;border-radius:6px;background:#1f6feb;color:#fff;' +
  'text-decoration:none}dt{font-weight:600}dd{margin:0 0 .5rem}';

/** No script at all, nothing loaded from anywhere, no framing, no form posts; only the page's own style. */
export const CONSENT_CSP =
  `default-src 'none'; style-src ${hashSource(STYLE)}; base-uri 'none'; form-action 'none'; ` +
  `frame-ancestors 'none'`;

/** Headers of every consent page: never cached, never framed, the capability URL never leaked. */
const PAGE_HEADERS = pageHeaders(CONSENT_CSP);

function page(status: number, title: string, inner: string): HtmlPage {
  const body =
    `<!doctype html><html lang="en"><head><meta charset="utf-8">` +
    `<meta name="viewport" content="width=device-width,initial-scale=1"><meta name="referrer" content="no-referrer">` +
    `<title>${escapeHtml(title)}</title><style>${STYLE}</style></head><body>${inner}</body></html>`;
  return { status, headers: { ...PAGE_HEADERS }, body };
}

/** Who the token will belong to, in words. */
export function identityText(f: FlowRecord): string {
  const vk = f.virtual_key_id !== undefined ? `virtual key ${f.virtual_key_name || f.virtual_key_id}` : undefined;
  switch (f.flow_mode) {
    case 'vk':
      return vk ?? `virtual key ${f.binding_id}`;
    case 'user':
      return `user ${f.user_name ?? f.user_id ?? f.binding_id}${vk ? ` (${vk})` : ''}`;
    case 'session':
      return `session ${f.session_id ?? f.binding_id}${vk ? ` (${vk})` : ''}`;
  }
}

function details(f: FlowRecord): string {
  return (
    `<dl><dt>MCP server</dt><dd>${escapeHtml(f.mcp_client_name)}</dd>` +
    `<dt>Access for</dt><dd>${escapeHtml(identityText(f))}</dd>` +
    `<dt>Link valid until</dt><dd>${escapeHtml(f.expires_at)}</dd></dl>`
  );
}

/** The consent page of a flow, by its state. `authorizePath` is the relative link that starts authorization. */
export function consentPage(f: FlowRecord, authorizePath: string): HtmlPage {
  const title = `Authorize ${f.mcp_client_name}`;
  const head = `<h1>${escapeHtml(title)}</h1>${details(f)}`;
  if (f.status === 'pending' && f.has_active_token) {
    return page(
      200,
      title,
      `${head}<p class="state" id="state" data-state="already_authenticated">Already authenticated: ` +
        `${escapeHtml(identityText(f))} already holds an active token for ${escapeHtml(f.mcp_client_name)}. ` +
        `Nothing to do; you can close this page.</p>`,
    );
  }
  switch (f.status) {
    case 'pending':
      return page(
        200,
        title,
        `${head}<p>The gateway will send you to the MCP server's sign-in page. The token you grant there is used ` +
          `only for tool calls of ${escapeHtml(identityText(f))}.</p>` +
          `<p><a class="button" id="authorize" href="${escapeHtml(authorizePath)}">Sign in and authorize</a></p>`,
      );
    case 'authorized':
      return page(
        200,
        title,
        `${head}<p class="state" id="state" data-state="authorized">Authorized. Tool calls of ` +
          `${escapeHtml(identityText(f))} now use this authorization; you can close this page.</p>`,
      );
    case 'failed':
      return page(
        200,
        title,
        `${head}<p class="state" id="state" data-state="failed">Authorization failed` +
          `${f.status_message ? `: ${escapeHtml(f.status_message)}` : ''}. Call the tool again for a new link.</p>`,
      );
    case 'expired':
      return page(
        200,
        title,
        `${head}<p class="state" id="state" data-state="expired">This authorization link has expired. ` +
          `Call the tool again for a new link.</p>`,
      );
  }
}

/** A page for a flow that cannot be shown (unknown or malformed id) or an authorization that cannot start. */
export function messagePage(status: number, title: string, message: string): HtmlPage {
  return page(status, title, `<h1>${escapeHtml(title)}</h1><p class="state" id="state">${escapeHtml(message)}</p>`);
}
