// HTTP/2 beside HTTP/1.1 on one port: h2c with prior knowledge on the plain port (what the AWS SDK's default
// HTTP/2 handler speaks to an http:// endpoint), h2 by ALPN when TLS is configured; inference, streams and
// authentication behave the same over both; a connection that never speaks is closed.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import http2 from 'node:http2';
import https from 'node:https';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOpenAIFake, type OpenAIFake } from '../fakes/openai.ts';
import { INFERENCE_TOKEN, startTestGateway, type TestGateway } from '../harness/gateway.ts';

const KEY = 'sk-test-http2-0123456789abcdef';
const CHAT = JSON.stringify({ model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] });
const STREAM = JSON.stringify({
  model: 'openai/gpt-4o-mini',
  stream: true,
  messages: [{ role: 'user', content: 'hi' }],
});

interface Answer {
  status: number;
  headers: http2.IncomingHttpHeaders;
  body: string;
}

function h2request(
  session: http2.ClientHttp2Session,
  path: string,
  headers: Record<string, string>,
  body?: string,
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = session.request({ ':method': body ? 'POST' : 'GET', ':path': path, ...headers });
    let data = '';
    let head: http2.IncomingHttpHeaders = {};
    req.on('response', (h) => {
      head = h;
    });
    req.setEncoding('utf8');
    req.on('data', (d: string) => {
      data += d;
    });
    req.on('end', () => resolve({ status: Number(head[':status']), headers: head, body: data }));
    req.on('error', reject);
    req.end(body);
  });
}

const json = { 'content-type': 'application/json' };
const auth = { authorization: `Bearer ${INFERENCE_TOKEN}` };

let fake: OpenAIFake;
beforeAll(async () => {
  fake = await createOpenAIFake().start();
});
afterAll(async () => {
  await fake.stop();
});

function config() {
  return {
    providers: {
      openai: { keys: [{ name: 'k', value: KEY, models: ['*'] }], network_config: { base_url: fake.url } },
    },
  };
}

describe('h2c on the plain port', () => {
  let gw: TestGateway;
  let session: http2.ClientHttp2Session;
  beforeAll(async () => {
    gw = await startTestGateway({ config: config(), env: { GATEWAY_HEADERS_TIMEOUT_MS: '1000' } });
    session = http2.connect(gw.url);
  });
  afterAll(async () => {
    session.close();
    await gw.close();
  });

  it('serves a chat completion, whole and streamed, over one HTTP/2 connection', async () => {
    const whole = await h2request(session, '/v1/chat/completions', { ...json, ...auth }, CHAT);
    expect(whole.status).toBe(200);
    expect(whole.headers['x-gateway-request-id']).toBeTruthy();
    expect(JSON.parse(whole.body)).toMatchObject({ object: 'chat.completion', extra_fields: { provider: 'openai' } });
    const streamed = await h2request(session, '/v1/chat/completions', { ...json, ...auth }, STREAM);
    expect(streamed.status).toBe(200);
    expect(streamed.headers['content-type']).toContain('text/event-stream');
    expect(streamed.body).toContain('"object":"chat.completion.chunk"');
    expect(streamed.body.trimEnd().endsWith('data: [DONE]')).toBe(true);
  });

  it('authenticates HTTP/2 requests like HTTP/1.1 ones, percent-encoded paths included', async () => {
    const none = await h2request(session, '/v1/chat/completions', json, CHAT);
    expect(none.status).toBe(401);
    expect(JSON.parse(none.body)).toMatchObject({ error: { code: 'authentication_failed' } });
    const encoded = await h2request(session, '/%61pi/providers', {});
    expect(encoded.status).toBe(401);
  });

  it('keeps serving HTTP/1.1 on the same port', async () => {
    const res = await fetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { ...json, ...auth },
      body: CHAT,
    });
    expect(res.status).toBe(200);
  });

  it('closes a connection that sends nothing, after the headers timeout', async () => {
    const port = Number(new URL(gw.url).port);
    const closedAfter = await new Promise<number>((resolve, reject) => {
      const start = Date.now();
      const socket = connect(port, '127.0.0.1');
      socket.on('close', () => resolve(Date.now() - start));
      socket.on('error', reject);
    });
    expect(closedAfter).toBeGreaterThanOrEqual(900);
    expect(closedAfter).toBeLessThan(5_000);
  });
});

describe('TLS: h2 and http/1.1 by ALPN', () => {
  let dir: string;
  let gw: TestGateway;
  let cert: Buffer;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'gw-tls-'));
    const key = join(dir, 'key.pem');
    const crt = join(dir, 'cert.pem');
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'ec',
        '-pkeyopt',
        'ec_paramgen_curve:prime256v1',
        '-nodes',
        '-keyout',
        key,
        '-out',
        crt,
        '-days',
        '1',
        '-subj',
        '/CN=127.0.0.1',
        '-addext',
        'subjectAltName=IP:127.0.0.1',
      ],
      { stdio: 'ignore' },
    );
    cert = readFileSync(crt);
    gw = await startTestGateway({
      config: config(),
      env: { GATEWAY_TLS_CERT_FILE: crt, GATEWAY_TLS_KEY_FILE: key },
    });
  });
  afterAll(async () => {
    await gw.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('answers over h2 with TLS', async () => {
    expect(gw.url.startsWith('https://')).toBe(true);
    const session = http2.connect(gw.url, { ca: cert });
    try {
      const res = await h2request(session, '/v1/chat/completions', { ...json, ...auth }, CHAT);
      expect(res.status).toBe(200);
      expect(session.alpnProtocol).toBe('h2');
    } finally {
      session.close();
    }
  });

  it('answers HTTP/1.1 over TLS on the same port', async () => {
    const status = await new Promise<number>((resolve, reject) => {
      const req = https.request(
        `${gw.url}/v1/chat/completions`,
        { method: 'POST', ca: cert, headers: { ...json, ...auth } },
        (res) => {
          res.resume();
          res.on('end', () => resolve(res.statusCode ?? 0));
        },
      );
      req.on('error', reject);
      req.end(CHAT);
    });
    expect(status).toBe(200);
  });
});
