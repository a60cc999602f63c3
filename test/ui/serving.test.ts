// How the gateway serves the dashboard's files (no browser): the page with a strict CSP, hashed assets cached as
// immutable, client routes answered with the page, `/` sent to the page, and a clear 404 when ui/ is not built.
import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../harness/gateway.ts';
import { rawRequest } from '../harness/raw-http.ts';
import { builtUi, startUiGateway, type UiGateway } from './harness.ts';

let gw: UiGateway;
let bare: TestGateway;
let asset: string;

beforeAll(async () => {
  const dir = await builtUi();
  asset = (await readdir(path.join(dir, 'assets'))).find((f) => f.endsWith('.js')) ?? '';
  [gw, bare] = await Promise.all([
    startUiGateway({ backend: 'embedded' }),
    startTestGateway({ backend: 'embedded', env: { GATEWAY_UI_DIR: '/nonexistent/ui-dist' } }),
  ]);
}, 120_000);
afterAll(async () => {
  await Promise.all([gw?.close(), bare?.close()]);
});

describe('dashboard files', () => {
  it('serves the page with a strict CSP and no caching', async () => {
    for (const p of ['/ui', '/ui/', '/ui/providers/openai', '/ui/config']) {
      const res = await fetch(gw.url + p);
      expect(res.status, p).toBe(200);
      expect(res.headers.get('content-type'), p).toMatch(/^text\/html/);
      expect(res.headers.get('cache-control'), p).toBe('no-cache');
      const csp = res.headers.get('content-security-policy') ?? '';
      expect(csp).toContain("default-src 'self'");
      expect(csp).toContain("script-src 'self'");
      expect(csp).not.toMatch(/script-src[^;]*unsafe-inline/);
      expect(csp).toContain("frame-ancestors 'none'");
      expect(res.headers.get('x-content-type-options')).toBe('nosniff');
      const html = await res.text();
      expect(html).toContain('<div id="root">');
      // Nothing from elsewhere: every script and style is the gateway's own.
      expect(html).not.toMatch(/(src|href)="https?:/);
      expect(html).toMatch(/src="\/ui\/assets\/index-[\w-]+\.js"/);
    }
  });

  it('caches hashed assets as immutable and answers a missing one with 404', async () => {
    const res = await fetch(`${gw.url}/ui/assets/${asset}`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/javascript/);
    expect(res.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    const missing = await fetch(`${gw.url}/ui/assets/nope-123.js`);
    expect(missing.status).toBe(404);
    expect(((await missing.json()) as { error: { message: string } }).error.message).toContain('no dashboard file');
  });

  it('sends a browser at / to the dashboard', async () => {
    const res = await fetch(`${gw.url}/`, { redirect: 'manual' });
    // A content type, as every answer has, and a page for clients that do not follow redirects.
    expect(res.headers.get('content-type')).toMatch(/^text\/html/);
    expect(res.status).toBe(302);
    expect(res.headers.get('location')).toBe('/ui/');
  });

  it('never serves files outside the build', async () => {
    for (const target of ['/ui/../package.json', '/ui/%2e%2e/%2e%2e/package.json', '/ui/.env']) {
      const res = await rawRequest(gw.url, `GET ${target} HTTP/1.1\r\nhost: x\r\nconnection: close`, '');
      // Either the page (a client route) or a refusal, never the file.
      expect(res.body, target).not.toContain('"workspaces"');
    }
  });

  it('answers 404 saying how to build it when ui/ is not built', async () => {
    for (const p of ['/ui', '/ui/', '/ui/providers', '/ui/assets/index.js']) {
      const res = await fetch(bare.url + p);
      expect(res.status, p).toBe(404);
      const body = (await res.json()) as { error: { message: string } };
      expect(body.error.message, p).toMatch(/dashboard is not built.*npm run build -w ui/);
    }
  });
});
