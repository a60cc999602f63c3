// Pure and local pieces of MCP OAuth: the single-use pending authorization (in-process coordinator; the Redis
// script runs in the e2e tests), metadata from given URLs, the token endpoint auth method, the guarded fetch
// (SSRF refusal, size bound, timeout), and the callback page (escaping, headers, hashed script).
import { createHash } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Agent } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GatewayError } from '../../src/http/errors.ts';
import { CALLBACK_CSP, callbackPage } from '../../src/mcp/oauth/callback-page.ts';
import { givenMetadata } from '../../src/mcp/oauth/discovery.ts';
import { oauthFetch, ResponseTooLarge } from '../../src/mcp/oauth/fetch.ts';
import { chooseAuthMethod, plainHttpEndpoint, registrationAuthMethod } from '../../src/mcp/oauth/protocol.ts';
import { OutboundAllowList } from '../../src/mcp/ssrf.ts';
import { createMemoryCoordinator, MemoryBackend } from '../../src/state/coord/memory.ts';
import { CoordLocks } from '../../src/state/services/oauth/locks.ts';
import {
  newStateValue,
  type PendingAuthorization,
  PendingAuthorizations,
} from '../../src/state/services/oauth/pending.ts';

describe('pending authorizations', () => {
  let now = 1_000_000;
  const coord = createMemoryCoordinator({ backend: new MemoryBackend(() => now) });
  const pending = new PendingAuthorizations(coord);
  const entry = (expiresAt: number): PendingAuthorization => ({
    configId: 'oac_1',
    kind: 'server',
    binding: { kind: 'server' },
    codeVerifier: 'v'.repeat(43),
    redirectUri: 'https://gw.example.com/api/oauth/callback',
    expiresAt,
  });

  it('a state is taken once', async () => {
    const state = newStateValue();
    expect(state).toMatch(/^[A-Za-z0-9_-]{43}$/);
    await pending.put(state, entry(now + 60_000), now);
    expect(await pending.take(state, now)).toMatchObject({ configId: 'oac_1', codeVerifier: 'v'.repeat(43) });
    expect(await pending.take(state, now)).toBeUndefined();
  });

  it('an expired state is refused (the key expires with the authorization, and is checked on take)', async () => {
    const state = newStateValue();
    await pending.put(state, entry(now + 1_000), now);
    now += 1_001;
    expect(await pending.take(state, now)).toBeUndefined();
  });

  it('a malformed or unknown state is refused without a lookup error', async () => {
    expect(await pending.take('', now)).toBeUndefined();
    expect(await pending.take('../../etc', now)).toBeUndefined();
    expect(await pending.take('A'.repeat(43), now)).toBeUndefined();
  });
});

describe('coordinator locks', () => {
  it('one holder at a time', async () => {
    const locks = new CoordLocks(createMemoryCoordinator());
    const order: string[] = [];
    const hold = (name: string) =>
      locks.with('k', async () => {
        order.push(`${name}-in`);
        await new Promise((r) => setTimeout(r, 50));
        order.push(`${name}-out`);
      });
    await Promise.all([hold('a'), hold('b')]);
    expect(order).toEqual(['a-in', 'a-out', 'b-in', 'b-out']);
  });

  it('a holder whose lock expired and was taken does not release the next holder’s', async () => {
    const coord = createMemoryCoordinator();
    await new CoordLocks(coord).with('k', async () => {
      await coord.set('k', 'the-next-holder');
    });
    expect(await coord.get('k')).toBe('the-next-holder');
  });
});

describe('metadata and client authentication', () => {
  it('given authorize and token URLs make the metadata, marked as given (no issuer to check)', () => {
    expect(
      givenMetadata({
        authorize_url: 'https://as.example.com/oauth/authorize',
        token_url: 'https://as.example.com/oauth/token',
        connection_string: 'https://mcp.example.com/mcp',
        connection_type: 'http',
      }),
    ).toEqual({
      issuer: 'https://as.example.com',
      authorization_endpoint: 'https://as.example.com/oauth/authorize',
      token_endpoint: 'https://as.example.com/oauth/token',
      code_challenge_methods_supported: ['S256'],
      gateway_endpoints_given: true,
    });
    expect(
      givenMetadata({ token_url: 'https://x/token', connection_string: 'https://x/mcp', connection_type: 'http' }),
    ).toBeUndefined();
  });

  it('client_secret_basic unless the server lists only post; none without a secret', () => {
    const md = (methods?: string[]) => ({ issuer: 'https://as', token_endpoint_auth_methods_supported: methods });
    expect(chooseAuthMethod(md(), true)).toBe('client_secret_basic');
    expect(chooseAuthMethod(md(['client_secret_post']), true)).toBe('client_secret_post');
    expect(chooseAuthMethod(md(['client_secret_basic', 'client_secret_post']), true)).toBe('client_secret_basic');
    expect(chooseAuthMethod(md(['client_secret_basic']), false)).toBe('none');
    expect(registrationAuthMethod(md(['none']))).toBe('none');
    expect(registrationAuthMethod(md(['none', 'client_secret_post']))).toBe('client_secret_post');
  });
});

describe('plain http endpoints', () => {
  it('are refused unless the allow-list names their host', () => {
    const md = (token: string) => ({ issuer: 'https://as', token_endpoint: token });
    const allow = new OutboundAllowList(['127.0.0.0/8', 'auth.internal']);
    expect(plainHttpEndpoint(md('https://as.example.com/token'), allow)).toBeUndefined();
    expect(plainHttpEndpoint(md('http://127.0.0.1:8080/token'), allow)).toBeUndefined();
    expect(plainHttpEndpoint(md('http://auth.internal/token'), allow)).toBeUndefined();
    expect(plainHttpEndpoint(md('http://as.example.com/token'), allow)).toBe('http://as.example.com/token');
    expect(plainHttpEndpoint({ ...md('https://as/token'), registration_endpoint: 'http://10.0.0.1/reg' }, allow)).toBe(
      'http://10.0.0.1/reg',
    );
  });
});

describe('guarded fetch', () => {
  let server: Server;
  let base = '';
  const dispatcher = new Agent();
  beforeAll(async () => {
    server = createServer((req, res) => {
      if (req.url === '/big') return void res.end('x'.repeat(10_000));
      if (req.url === '/slow') return; // never answers
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
    await dispatcher.close();
  });
  const fetchWith = (allow: string[], extra: { maxBytes?: number; timeoutMs?: number } = {}) =>
    oauthFetch({
      allowList: new OutboundAllowList(allow),
      dispatcher,
      timeoutMs: extra.timeoutMs ?? 2_000,
      maxBytes: extra.maxBytes ?? 1_000,
    });

  it('answers within bounds', async () => {
    const res = await fetchWith(['127.0.0.0/8'])(`${base}/ok`);
    expect(await res.json()).toEqual({ ok: true });
  });

  it('refuses an address the SSRF guard does not admit, before any request', async () => {
    await expect(fetchWith([])(`${base}/ok`)).rejects.toBeInstanceOf(GatewayError);
    await expect(fetchWith([])('http://169.254.169.254/latest/meta-data')).rejects.toThrow(/link-local/);
  });

  it('refuses an answer larger than the bound', async () => {
    await expect(fetchWith(['127.0.0.0/8'])(`${base}/big`)).rejects.toBeInstanceOf(ResponseTooLarge);
  });

  it('gives up after the timeout', async () => {
    await expect(fetchWith(['127.0.0.0/8'], { timeoutMs: 200 })(`${base}/slow`)).rejects.toThrow();
  });

  it('answers known documents from memory without a request', async () => {
    const f = oauthFetch({
      allowList: new OutboundAllowList([]),
      dispatcher,
      timeoutMs: 100,
      maxBytes: 100,
      local: new Map([['https://as.example.com/.well-known/x', { issuer: 'https://as.example.com' }]]),
    });
    expect(await (await f('https://as.example.com/.well-known/x')).json()).toEqual({
      issuer: 'https://as.example.com',
    });
  });
});

describe('callback page', () => {
  it('success: 200, closes the popup with the one script its CSP admits, no-store', () => {
    const p = callbackPage({ ok: true, kind: 'server', configId: 'oac_1', clientName: 'docs<script>' });
    expect(p.status).toBe(200);
    expect(p.headers['cache-control']).toBe('no-store');
    expect(p.body).toContain('docs&#60;script&#62;');
    const script = /<script>(.*?)<\/script>/.exec(p.body)?.[1] ?? '';
    expect(script).toContain('window.close()');
    const hash = createHash('sha256').update(script).digest('base64');
    expect(CALLBACK_CSP).toContain(`script-src 'sha256-${hash}'`);
    expect(p.headers['content-security-policy']).toBe(CALLBACK_CSP);
  });

  it('failure: 400, the message escaped, no script', () => {
    const p = callbackPage({ ok: false, message: 'refused: <img src=x onerror=alert(1)>' });
    expect(p.status).toBe(400);
    expect(p.body).not.toContain('<img');
    expect(p.body).not.toContain('<script>');
  });
});
