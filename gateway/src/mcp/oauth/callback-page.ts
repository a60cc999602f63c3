// The page the browser shows after the authorization server redirected it to `/api/oauth/callback`: plain HTML,
// every value escaped, never cached, never framed, no referrer, and one hashed inline script that closes the
// popup after a moment (a tab opened by hand ignores `window.close()` and keeps the message). No secret is shown.
import { escapeHtml, type HtmlPage, hashSource, pageHeaders } from './html.ts';
import type { OAuthCallbackResult } from './types.ts';

export type CallbackPage = HtmlPage;

const STYLE =
  'body{font-family:system-ui,sans-serif;max-width:36rem;margin:3rem auto;padding:0 1rem;color:#1f2328}' +
  'h1{font-size:1.4rem}.ok{color:#1a7f37}.err{color:#cf222e}';
const SCRIPT = 'setTimeout(function(){window.close()},1500);';

export const CALLBACK_CSP =
  `default-src 'none'; script-src ${hashSource(SCRIPT)}; style-src ${hashSource(STYLE)}; ` +
  `base-uri 'none'; form-action 'none'; frame-ancestors 'none'`;

const HEADERS = pageHeaders(CALLBACK_CSP);

function page(status: number, title: string, cls: string, inner: string, script: boolean): CallbackPage {
  const body =
    `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(title)}</title>` +
    `<meta name="viewport" content="width=device-width, initial-scale=1"><style>${STYLE}</style></head>` +
    `<body><h1 class="${cls}">${escapeHtml(title)}</h1>${inner}${script ? `<script>${SCRIPT}</script>` : ''}</body></html>`;
  return { status, headers: HEADERS, body };
}

export function callbackPage(result: OAuthCallbackResult): CallbackPage {
  if (result.ok) {
    const who = result.clientName ? ` for MCP client <strong>${escapeHtml(result.clientName)}</strong>` : '';
    const then =
      result.kind === 'server'
        ? 'The gateway now connects to the tool server with this authorization, for every caller.'
        : 'Your tool calls through the gateway now use this authorization.';
    return page(
      200,
      'Authorization complete',
      'ok',
      `<p>The authorization${who} succeeded. ${then}</p><p>You can close this window.</p>`,
      true,
    );
  }
  return page(400, 'Authorization failed', 'err', `<p>${escapeHtml(result.message)}</p>`, false);
}
