// The management API on real Postgres + Redis: auth, config, providers, keys; every bad input gets the
// envelope and stores nothing.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_KEY, startTestGateway, type TestGateway } from '../harness/gateway.ts';

let gw: TestGateway;

beforeAll(async () => {
  gw = await startTestGateway();
});
afterAll(async () => {
  await gw?.close();
});

async function json(res: Response): Promise<Record<string, unknown>> {
  return (await res.json()) as Record<string, unknown>;
}

function expectEnvelope(body: Record<string, unknown>, status: number, code?: string): void {
  expect(body['status_code']).toBe(status);
  expect(body['is_gateway_error']).toBe(true);
  expect(typeof body['event_id']).toBe('string');
  const err = body['error'] as Record<string, unknown>;
  expect(typeof err['message']).toBe('string');
  expect(err['event_id']).toBe(body['event_id']);
  if (code) expect(err['code']).toBe(code);
}

describe('management authentication', () => {
  it('rejects a missing key, a wrong key, x-api-key and virtual keys with 401 in the envelope', async () => {
    const cases: Record<string, string>[] = [
      {},
      { authorization: 'Bearer wrong-key-123456' },
      { 'x-api-key': ADMIN_KEY },
      { authorization: 'Bearer sk-vk-0123456789abcdef' },
      { 'x-gateway-vk': 'sk-vk-0123456789abcdef' },
      { authorization: `Basic ${Buffer.from(`admin:${ADMIN_KEY}`).toString('base64')}` },
    ];
    for (const headers of cases) {
      const res = await fetch(`${gw.url}/api/providers`, { headers });
      expect(res.status, JSON.stringify(headers)).toBe(401);
      expectEnvelope(await json(res), 401, 'authentication_failed');
    }
  });

  it('accepts the admin key as a Bearer token', async () => {
    const res = await gw.admin('/api/providers');
    expect(res.status).toBe(200);
    expect(await json(res)).toEqual({ providers: [], total: 0 });
  });

  it('serves /health without credentials and /ready reflecting Postgres and Redis', async () => {
    expect((await fetch(`${gw.url}/health`)).status).toBe(200);
    const ready = await fetch(`${gw.url}/ready`);
    expect(ready.status).toBe(200);
    expect(await json(ready)).toMatchObject({
      status: 'ready',
      database: { kind: 'postgres', ok: true },
      coordination: { kind: 'redis', ok: true },
    });
  });

  it('answers unknown routes with a 404 envelope', async () => {
    const res = await gw.admin('/api/nope');
    expect(res.status).toBe(404);
    expectEnvelope(await json(res), 404, 'not_found');
  });
});

describe('/api/config', () => {
  it('reads and replaces the client config', async () => {
    const before = await json(await gw.admin('/api/config'));
    expect(before['client_config']).toMatchObject({ enforce_auth_on_inference: true });
    const put = await gw.admin('/api/config', {
      method: 'PUT',
      body: { client_config: { enforce_auth_on_inference: true, max_request_body_size_mb: 20 } },
    });
    expect(put.status).toBe(200);
    const after = await json(await gw.admin('/api/config'));
    expect(after['client_config']).toMatchObject({ max_request_body_size_mb: 20 });
  });

  it('rejects allow_direct_keys and unknown fields, storing nothing', async () => {
    for (const client_config of [
      { allow_direct_keys: true },
      { no_such_field: 1 },
      { max_request_body_size_mb: -1 },
      // Below 1 MB every body would be refused, the PUT that could undo it too.
      { max_request_body_size_mb: 1e-9 },
    ]) {
      const res = await gw.admin('/api/config', { method: 'PUT', body: { client_config } });
      expect(res.status).toBe(400);
      const body = await json(res);
      expectEnvelope(body, 400, 'invalid_request');
      if ('allow_direct_keys' in client_config) {
        expect((body['error'] as { message: string }).message).toContain('allow_direct_keys');
      }
    }
    const after = await json(await gw.admin('/api/config'));
    expect(after['client_config']).toMatchObject({ max_request_body_size_mb: 20 });
    expect(after['client_config']).not.toHaveProperty('allow_direct_keys');
  });
});

describe('/api/providers', () => {
  it('creates, reads, updates and deletes a provider; payloads never carry keys', async () => {
    const created = await gw.admin('/api/providers', {
      method: 'POST',
      body: { provider: 'openai', network_config: { base_url: 'http://127.0.0.1:9' } },
    });
    expect(created.status).toBe(200);
    const body = await json(created);
    expect(body).toMatchObject({ name: 'openai', network_config: { base_url: 'http://127.0.0.1:9' }, source: 'api' });
    expect(body).not.toHaveProperty('keys');

    const updated = await gw.admin('/api/providers/openai', {
      method: 'PUT',
      body: { network_config: { base_url: 'http://127.0.0.1:10', max_retries: 1 } },
    });
    expect(updated.status).toBe(200);
    expect(await json(updated)).toMatchObject({ network_config: { base_url: 'http://127.0.0.1:10', max_retries: 1 } });

    const list = await json(await gw.admin('/api/providers'));
    expect(list['total']).toBe(1);

    expect((await gw.admin('/api/providers/openai', { method: 'DELETE' })).status).toBe(200);
    expect((await gw.admin('/api/providers/openai')).status).toBe(404);
  });

  it('rejects keys in provider payloads with a message pointing at the keys endpoints', async () => {
    const res = await gw.admin('/api/providers', { method: 'POST', body: { provider: 'anthropic', keys: [] } });
    expect(res.status).toBe(400);
    const body = await json(res);
    expectEnvelope(body, 400, 'invalid_request');
    expect((body['error'] as { message: string }).message).toContain('/api/providers/{provider}/keys');
    expect((await gw.admin('/api/providers/anthropic')).status).toBe(404);

    await gw.admin('/api/providers', { method: 'POST', body: { provider: 'anthropic' } });
    const upd = await gw.admin('/api/providers/anthropic', { method: 'PUT', body: { keys: [{ value: 'x' }] } });
    expect(upd.status).toBe(400);
    expect((await json(await gw.admin('/api/providers/anthropic/keys')))['keys']).toEqual([]);
  });

  it('rejects unknown providers, bad base URLs and duplicates', async () => {
    const unknown = await gw.admin('/api/providers', { method: 'POST', body: { provider: 'nosuch' } });
    expect(unknown.status).toBe(400);
    const badUrl = await gw.admin('/api/providers', {
      method: 'POST',
      body: { provider: 'groq', network_config: { base_url: 'ftp://x' } },
    });
    expect(badUrl.status).toBe(400);
    expect((await json(badUrl))['error']).toMatchObject({
      message: expect.stringContaining('network_config.base_url'),
    });
    expect((await gw.admin('/api/providers/groq')).status).toBe(404);
    const dup = await gw.admin('/api/providers', { method: 'POST', body: { provider: 'anthropic' } });
    expect(dup.status).toBe(409);
  });
});

describe('/api/providers/{provider}/keys', () => {
  const secret = 'sk-test-abcdefghijklmnopqrstuvwxyz';

  it('adds, lists, reads, updates and deletes keys with values redacted in every response', async () => {
    await gw.admin('/api/providers', { method: 'POST', body: { provider: 'mistral' } });
    const add = await gw.admin('/api/providers/mistral/keys', {
      method: 'POST',
      body: { name: 'primary', value: secret, models: ['*'], weight: 2, aliases: { small: 'mistral-small-latest' } },
    });
    expect(add.status).toBe(200);
    const key = await json(add);
    expect(key).toMatchObject({
      name: 'primary',
      models: ['*'],
      weight: 2,
      aliases: { small: 'mistral-small-latest' },
    });
    expect(JSON.stringify(key)).not.toContain(secret);
    expect(key['value']).toBe('sk-t********wxyz');
    const id = key['id'] as string;

    const list = await json(await gw.admin('/api/providers/mistral/keys'));
    expect(list['keys']).toHaveLength(1);
    expect(JSON.stringify(list)).not.toContain(secret);

    // PUT with the redacted value keeps the stored secret.
    const put = await gw.admin(`/api/providers/mistral/keys/${id}`, {
      method: 'PUT',
      body: { name: 'primary', value: key['value'], models: ['mistral-small-latest'], weight: 1 },
    });
    expect(put.status).toBe(200);
    expect(await json(put)).toMatchObject({ value: 'sk-t********wxyz', models: ['mistral-small-latest'] });
    const stored = gw.rt.state.snapshot.providers.get('mistral')?.keysById.get(id);
    expect(stored?.value).toBe(secret);

    expect((await gw.admin(`/api/providers/mistral/keys/${id}`, { method: 'DELETE' })).status).toBe(200);
    expect((await gw.admin(`/api/providers/mistral/keys/${id}`)).status).toBe(404);
  });

  it('rejects allow-lists mixing * or holding duplicates, and stores nothing', async () => {
    await gw.admin('/api/providers', { method: 'POST', body: { provider: 'deepseek' } });
    for (const models of [
      ['*', 'deepseek-chat'],
      ['deepseek-chat', 'deepseek-chat'],
    ]) {
      const res = await gw.admin('/api/providers/deepseek/keys', { method: 'POST', body: { value: secret, models } });
      expect(res.status).toBe(400);
      const body = await json(res);
      expectEnvelope(body, 400, 'invalid_request');
      expect((body['error'] as { message: string }).message).toMatch(/models: ("\*" must stand alone|duplicate)/);
    }
    expect((await json(await gw.admin('/api/providers/deepseek/keys')))['keys']).toEqual([]);
  });

  it('rejects keys a provider cannot use and keys for unknown providers', async () => {
    await gw.admin('/api/providers', { method: 'POST', body: { provider: 'bedrock' } });
    const noCreds = await gw.admin('/api/providers/bedrock/keys', { method: 'POST', body: { models: ['*'] } });
    expect(noCreds.status).toBe(400);
    expect((await json(noCreds))['error']).toMatchObject({ message: expect.stringContaining('bedrock_key_config') });
    const missing = await gw.admin('/api/providers/xai/keys', {
      method: 'POST',
      body: { value: secret, models: ['*'] },
    });
    expect(missing.status).toBe(404);
    expect((await json(await gw.admin('/api/providers/bedrock/keys')))['keys']).toEqual([]);
  });

  it('redacts bedrock credentials and keeps them on update', async () => {
    const add = await gw.admin('/api/providers/bedrock/keys', {
      method: 'POST',
      body: {
        name: 'aws',
        models: ['*'],
        bedrock_key_config: {
          access_key: 'AKIAABCDEFGHIJKLMNOP',
          secret_key: 'abcdefghijklmnopqrstuvwxyz0123456789ABCD',
          region: 'us-east-1',
        },
        aliases: { claude: 'arn:aws:bedrock:us-east-1:123:inference-profile/x' },
      },
    });
    expect(add.status).toBe(200);
    const key = await json(add);
    expect(JSON.stringify(key)).not.toContain('abcdefghijklmnopqrstuvwxyz0123456789ABCD');
    expect(key['bedrock_key_config']).toMatchObject({ region: 'us-east-1', secret_key: 'abcd********ABCD' });
  });
});

describe('CORS', () => {
  it('answers preflights for allowed origins only, from client.allowed_origins', async () => {
    const preflight = (origin: string) =>
      fetch(`${gw.url}/v1/chat/completions`, {
        method: 'OPTIONS',
        headers: { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization' },
      });
    expect((await preflight('https://app.example.com')).status).toBe(403);
    await gw.admin('/api/config', {
      method: 'PUT',
      body: { client_config: { allowed_origins: ['https://app.example.com'], max_request_body_size_mb: 20 } },
    });
    const ok = await preflight('https://app.example.com');
    expect(ok.status).toBe(204);
    expect(ok.headers.get('access-control-allow-origin')).toBe('https://app.example.com');
    expect(ok.headers.get('access-control-allow-headers')).toContain('authorization');
    expect((await preflight('https://evil.example.com')).status).toBe(403);
  });
});

describe('request size limit', () => {
  it('rejects bodies over client.max_request_body_size_mb with 413 before reading them', async () => {
    await gw.admin('/api/config', { method: 'PUT', body: { client_config: { max_request_body_size_mb: 1 } } });
    const res = await gw.admin('/api/providers', {
      method: 'POST',
      body: { provider: 'openai', padding: 'x'.repeat(1_100_000) },
    });
    expect(res.status).toBe(413);
    expect(((await res.json()) as Record<string, unknown>)['status_code']).toBe(413);
    expect((await gw.admin('/api/providers/openai')).status).toBe(404);
  });
});

describe('conflicts', () => {
  it('refuses to rename a key onto another key of the provider', async () => {
    await gw.admin('/api/config', { method: 'PUT', body: { client_config: {} } });
    await gw.admin('/api/providers', { method: 'POST', body: { provider: 'openrouter' } });
    const one = (await (
      await gw.admin('/api/providers/openrouter/keys', {
        method: 'POST',
        body: { name: 'one', value: 'sk-or-0123456789abcdef', models: ['*'] },
      })
    ).json()) as { id: string };
    await gw.admin('/api/providers/openrouter/keys', {
      method: 'POST',
      body: { name: 'two', value: 'sk-or-abcdef0123456789', models: ['*'] },
    });
    const res = await gw.admin(`/api/providers/openrouter/keys/${one.id}`, {
      method: 'PUT',
      body: { name: 'two', models: ['*'] },
    });
    expect(res.status).toBe(409);
    const names = ((await (await gw.admin('/api/providers/openrouter/keys')).json()) as { keys: { name: string }[] })
      .keys;
    expect(names.map((k) => k.name).sort()).toEqual(['one', 'two']);
  });

  it('refuses REST changes to rows a Kubernetes resource owns, naming what to edit', async () => {
    await gw.rt.state.providers.create({ provider: 'xai' }, { source: 'kubernetes', ownerRef: 'team-a/xai' });
    const res = await gw.admin('/api/providers/xai', { method: 'PUT', body: { network_config: { max_retries: 1 } } });
    expect(res.status).toBe(409);
    const body = (await res.json()) as { error: { code: string; message: string } };
    expect(body.error.code).toBe('owned_by_kubernetes');
    expect(body.error.message).toContain('team-a/xai');
    expect(body.error.message).toContain('kubectl');
    expect((await gw.admin('/api/providers/xai', { method: 'DELETE' })).status).toBe(409);
  });
});
