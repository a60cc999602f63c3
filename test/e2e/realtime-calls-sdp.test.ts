// The realtime HTTP routes end to end (issue 17): the official openai SDK's calls (WebRTC SDP exchange) and
// client secrets resources against the TLS gateway on real Postgres and Redis, in front of a fake realtime
// upstream, and the census of the realtime routes on every OpenAI mount. Metered calls live in
// realtime-calls.test.ts, client secrets under governance in realtime-client-secrets.test.ts.
import OpenAI from 'openai';
import { describe, expect, it } from 'vitest';
import { ANSWER_SDP } from '../fakes/realtime-openai.ts';
import { INFERENCE_TOKEN } from '../harness/gateway.ts';
import { OPENAI_KEY, useRealtimeTlsGateway } from './realtime-helpers.ts';

const OFFER = 'v=0\r\no=- 1 2 IN IP4 127.0.0.1\r\ns=-\r\nt=0 0\r\na=fake-offer\r\n';

const env = useRealtimeTlsGateway();

describe('the route census', () => {
  it('has the realtime routes at /v1 and every OpenAI mount, authenticated, the session documented as 101', async () => {
    const routes = env.gw.app.routes();
    const doc = (await (await fetch(`${env.gw.url}/openapi.json`)).json()) as {
      paths: Record<string, Record<string, { responses: Record<string, unknown> }>>;
    };
    for (const prefix of ['/v1', '/compat-a/v1', '/aggregator/v1', '/langchain/compat-a/v1']) {
      for (const [method, path] of [
        ['GET', '/realtime'],
        ['POST', '/realtime/calls'],
        ['POST', '/realtime/client_secrets'],
      ] as const) {
        const url = `${prefix}${path}`;
        expect(routes.find((r) => r.url === url && r.method === method)?.scheme, url).toBe('inference');
        expect(doc.paths[url]?.[method.toLowerCase()], url).toBeDefined();
      }
      expect(doc.paths[`${prefix}/realtime`]?.['get']?.responses['101']).toBeDefined();
    }
  });
});

describe('the WebRTC SDP exchange', () => {
  it('forwards the GA multipart form (sdp + session) and answers the SDP as text', async () => {
    const res = await env.client(INFERENCE_TOKEN).realtime.calls.create({
      sdp: OFFER,
      session: { type: 'realtime', model: 'openai/gpt-realtime', instructions: 'hi' },
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/sdp/);
    expect(await res.text()).toBe(ANSWER_SDP);
    const call = env.fake.calls[0];
    expect(call?.path).toBe('/v1/realtime/calls');
    expect(call?.headers['authorization']).toBe(`Bearer ${OPENAI_KEY}`);
    expect(call?.parts['sdp']).toBe(OFFER);
    expect(JSON.parse(call?.parts['session'] ?? '{}')).toEqual({
      type: 'realtime',
      model: 'gpt-realtime',
      instructions: 'hi',
    });
  });

  it('forwards the legacy raw application/sdp offer, the model in the query', async () => {
    const res = await env
      .client(INFERENCE_TOKEN, '/compat-a/v1')
      .realtime.calls.create({ sdp: OFFER }, { query: { model: 'gpt-realtime' } });
    expect(res.status).toBe(200);
    expect(await res.text()).toBe(ANSWER_SDP);
    expect(env.fake.calls[0]?.parts['sdp']).toBe(OFFER);
    expect(JSON.parse(env.fake.calls[0]?.parts['session'] ?? '{}')).toEqual({
      type: 'realtime',
      model: 'gpt-realtime',
    });
  });

  it('answers bad offers in the envelope and calls nothing', async () => {
    const auth = { authorization: `Bearer ${INFERENCE_TOKEN}` };
    // Without a type, fetch sets the body's own (a form's multipart boundary).
    const post = (body: string | FormData, type: string | undefined, q = '?model=openai/gpt-realtime') =>
      fetch(`${env.gw.url}/v1/realtime/calls${q}`, {
        method: 'POST',
        headers: type === undefined ? auth : { ...auth, 'content-type': type },
        body,
      });
    const notSdp = await post('hello', 'application/sdp');
    expect(notSdp.status).toBe(400);
    expect(await notSdp.json()).toMatchObject({ is_gateway_error: true, error: { param: 'sdp' } });
    const noModel = await post(OFFER, 'application/sdp', '');
    expect(noModel.status).toBe(400);
    const form = new FormData();
    form.append('sdp', OFFER);
    form.append('session', '{not json');
    const badSession = await post(form, undefined);
    expect([400, 415]).toContain(badSession.status);
    const json = await post('{"sdp":"v=0"}', 'application/json');
    expect(json.status).toBe(415);
    expect(env.fake.calls).toHaveLength(0);
  });

  it('mints a client secret with the gateway’s key and the upstream model', async () => {
    const secret = await env.client(INFERENCE_TOKEN).realtime.clientSecrets.create({
      expires_after: { anchor: 'created_at', seconds: 600 },
      session: { type: 'realtime', model: 'openai/gpt-realtime' },
    });
    expect(secret.value).toMatch(/^ek_fake_/);
    const call = env.fake.calls[0];
    expect(call?.path).toBe('/v1/realtime/client_secrets');
    expect(call?.headers['authorization']).toBe(`Bearer ${OPENAI_KEY}`);
    expect(call?.json).toEqual({
      expires_after: { anchor: 'created_at', seconds: 600 },
      session: { type: 'realtime', model: 'gpt-realtime' },
    });
    const bad = await env
      .client(INFERENCE_TOKEN)
      .realtime.clientSecrets.create({ session: { type: 'realtime' } })
      .catch((e: unknown) => e);
    expect(bad).toBeInstanceOf(OpenAI.BadRequestError);
  });
});
