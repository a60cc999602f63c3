// Hostile input to the management API on real Postgres + Redis: control characters, broken Unicode, header-unsafe
// key values, over-long strings, out-of-range numbers, impossible dates and huge lists each get a 400
// `invalid_request` naming the field, never a 5xx, and nothing is stored.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../harness/gateway.ts';

let gw: TestGateway;

beforeAll(async () => {
  gw = await startTestGateway({ config: { mcp: { allowed_private_networks: ['127.0.0.0/8'] } } });
  // Virtual keys' mcp_configs name an existing MCP client (disabled: nothing listens there).
  const fs = { name: 'fs', connection_type: 'http', connection_string: 'http://127.0.0.1:9/mcp', disabled: true };
  expect((await gw.admin('/api/mcp/client', { method: 'POST', body: fs })).status).toBe(200);
  for (const provider of ['openai', 'azure', 'bedrock']) {
    expect((await gw.admin('/api/providers', { method: 'POST', body: { provider } })).status).toBe(200);
  }
});
afterAll(async () => {
  await gw?.close();
});

type Json = Record<string, unknown>;

async function call(path: string, method: string, body?: unknown): Promise<{ status: number; body: Json }> {
  const res = await gw.admin(path, { method, ...(body === undefined ? {} : { body }) });
  const text = await res.text();
  return { status: res.status, body: text ? (JSON.parse(text) as Json) : {} };
}

async function list(path: string): Promise<unknown> {
  const res = await call(path, 'GET');
  expect(res.status, path).toBe(200);
  return res.body;
}

function errorOf(body: Json): { code: unknown; param: unknown; message: string } {
  const err = body['error'] as Json;
  return { code: err['code'], param: err['param'], message: String(err['message']) };
}

/** A copy of `body` with the value at `path` (`a.b[0].c`) replaced. */
function withValue(body: Json, path: string, value: unknown): Json {
  const copy = structuredClone(body);
  const segs = path.match(/[^.[\]]+/g) ?? [];
  let at: Record<string, unknown> | unknown[] = copy;
  for (const [i, seg] of segs.entries()) {
    const key = /^\d+$/.test(seg) ? Number(seg) : seg;
    if (i === segs.length - 1) {
      (at as Record<string | number, unknown>)[key] = value;
    } else {
      at = (at as Record<string | number, unknown>)[key] as Record<string, unknown>;
    }
  }
  return copy;
}

/** Invalid in every kind of string field: names, ids, free text, header values. */
const HOSTILE_ANYWHERE: [string, unknown][] = [
  ['NUL', '\u0000'],
  ['inner NUL', 'a\u0000b'],
  ['BEL', 'a\u0007'],
  ['ESC sequence', '\u001b[31mred'],
  ['DEL', 'a\u007f'],
  ['C1 NEL', 'a\u0085'],
  ['C1 CSI', '\u009b31m'],
  ['lone high surrogate', 'a\ud800'],
  ['lone low surrogate', '\udc00b'],
  ['70,000 characters', 'x'.repeat(70_000)],
  ['a number', 12],
  ['a boolean', true],
  ['an object', { a: 'b' }],
  ['an array', ['a']],
];
/** Also invalid in one-line fields (names, ids, models, header values). */
const HOSTILE_ONE_LINE: [string, unknown][] = [
  ...HOSTILE_ANYWHERE,
  ['CRLF', 'a\r\nb'],
  ['trailing LF', 'a\n'],
  ['TAB', 'a\tb'],
];
/** Out of range for every numeric field of the API. */
const HOSTILE_NUMBERS: [string, unknown][] = [
  ['1e308', 1e308],
  ['-1e308', -1e308],
  ['1e20', 1e20],
  ['a numeric string', '12'],
];

interface Endpoint {
  name: string;
  create: string;
  /** The list whose content must not change. */
  list: string;
  body: Json;
  oneLine: string[];
  text?: string[];
  numbers?: string[];
  /** A field that takes a list or map, and a value too large for it. */
  huge?: [string, unknown][];
}

const ENDPOINTS: Endpoint[] = [
  {
    name: 'providers',
    create: '/api/providers',
    list: '/api/providers',
    body: { provider: 'mistral', network_config: { base_url: 'http://127.0.0.1:9', extra_headers: { 'x-a': 'b' } } },
    oneLine: ['provider', 'network_config.base_url', 'network_config.extra_headers.x-a'],
    numbers: ['network_config.max_retries', 'network_config.default_request_timeout_in_seconds'],
    huge: [
      ['network_config.extra_headers', Object.fromEntries(Array.from({ length: 101 }, (_, i) => [`x-h${i}`, 'v']))],
    ],
  },
  {
    name: 'openai keys',
    create: '/api/providers/openai/keys',
    list: '/api/providers/openai/keys',
    body: { id: 'k-openai', name: 'main', value: 'sk-valid-0123456789', models: ['gpt-4o'], aliases: { a: 'b' } },
    oneLine: ['id', 'name', 'value', 'models[0]', 'aliases.a'],
    numbers: ['weight'],
    huge: [
      ['models', Array.from({ length: 1001 }, (_, i) => `m${i}`)],
      ['aliases', Object.fromEntries(Array.from({ length: 1001 }, (_, i) => [`m${i}`, 'x']))],
    ],
  },
  {
    name: 'azure keys',
    create: '/api/providers/azure/keys',
    list: '/api/providers/azure/keys',
    body: {
      name: 'az',
      value: 'az-valid-0123456789',
      azure_key_config: { endpoint: 'https://example.openai.azure.com', api_version: '2024-02-01', deployments: {} },
    },
    oneLine: ['value', 'azure_key_config.endpoint', 'azure_key_config.api_version'],
  },
  {
    name: 'bedrock keys',
    create: '/api/providers/bedrock/keys',
    list: '/api/providers/bedrock/keys',
    body: {
      name: 'br',
      bedrock_key_config: {
        access_key: 'AKIA0123',
        secret_key: 'secret0123',
        session_token: 'tok0',
        region: 'us-east-1',
      },
    },
    oneLine: [
      'bedrock_key_config.access_key',
      'bedrock_key_config.secret_key',
      'bedrock_key_config.session_token',
      'bedrock_key_config.region',
    ],
  },
  {
    name: 'virtual keys',
    create: '/api/governance/virtual-keys',
    list: '/api/governance/virtual-keys',
    body: {
      id: 'vk-1',
      name: 'vk',
      description: 'line one\nline two',
      expires_at: '2030-01-01T00:00:00Z',
      provider_configs: [
        {
          provider: 'openai',
          allowed_models: ['gpt-4o'],
          key_ids: ['*'],
          budgets: [{ max_limit: 1, reset_duration: '1d' }],
        },
      ],
      mcp_configs: [{ mcp_client_name: 'fs', tools_to_execute: ['read'] }],
      budgets: [{ max_limit: 5, reset_duration: '30d' }],
      rate_limit: { request_max_limit: 10, request_reset_duration: '1m' },
    },
    oneLine: [
      'id',
      'name',
      'expires_at',
      'provider_configs[0].provider',
      'provider_configs[0].allowed_models[0]',
      'provider_configs[0].key_ids[0]',
      'mcp_configs[0].mcp_client_name',
      'mcp_configs[0].tools_to_execute[0]',
      'budgets[0].id',
      'budgets[0].reset_duration',
      'team_id',
      'value',
    ],
    text: ['description'],
    numbers: [
      'budgets[0].max_limit',
      'provider_configs[0].weight',
      'provider_configs[0].budgets[0].max_limit',
      'rate_limit.request_max_limit',
    ],
    huge: [
      ['provider_configs', Array.from({ length: 101 }, (_, i) => ({ provider: 'openai', key_ids: [`k${i}`] }))],
      ['budgets', Array.from({ length: 21 }, () => ({ max_limit: 1, reset_duration: '1d' }))],
    ],
  },
  ...(['teams', 'customers'] as const).map(
    (kind): Endpoint => ({
      name: kind,
      create: `/api/governance/${kind}`,
      list: `/api/governance/${kind}`,
      body: {
        id: `${kind}-1`,
        name: kind,
        description: 'tab\tand\r\nbreaks are fine',
        budgets: [{ max_limit: 5, reset_duration: '1M' }],
        rate_limit: { token_max_limit: 1000, token_reset_duration: '1h' },
      },
      oneLine: ['id', 'name', 'budgets[0].reset_duration'],
      text: ['description'],
      numbers: ['budgets[0].max_limit', 'rate_limit.token_max_limit'],
      huge: [['budgets', Array.from({ length: 21 }, () => ({ max_limit: 1, reset_duration: '1d' }))]],
    }),
  ),
  {
    name: 'pricing overrides',
    create: '/api/governance/pricing-overrides',
    list: '/api/governance/pricing-overrides',
    body: {
      id: 'po-1',
      scope: 'provider',
      scope_id: 'openai',
      provider: 'openai',
      model: 'gpt-4o',
      input_cost_per_token: 0.000001,
      output_cost_per_token: 0.000002,
    },
    oneLine: ['id', 'scope_id', 'provider', 'model'],
    numbers: ['input_cost_per_token', 'output_cost_per_token'],
  },
  {
    name: 'routing rules',
    create: '/api/governance/routing-rules',
    list: '/api/governance/routing-rules',
    body: {
      id: 'rr-1',
      name: 'rule',
      description: 'sends gpt-4o\nto mini',
      condition: 'request.model == "gpt-4o"\n  && true',
      targets: [{ provider: 'openai', model: 'gpt-4o-mini' }],
      fallbacks: ['openai/gpt-4o'],
    },
    oneLine: ['id', 'name', 'targets[0].provider', 'targets[0].model', 'fallbacks[0]'],
    text: ['description', 'condition'],
    numbers: ['priority', 'targets[0].weight'],
    huge: [['targets', Array.from({ length: 21 }, (_, i) => ({ provider: 'openai', model: `m${i}` }))]],
  },
];

describe('management create endpoints refuse hostile values', () => {
  for (const ep of ENDPOINTS) {
    it(`${ep.name}: every hostile value in every field is a 400 naming the field, and nothing is stored`, async () => {
      const before = await list(ep.list);
      const cases: [string, unknown][] = [
        ...ep.oneLine.flatMap((f) => HOSTILE_ONE_LINE.map(([, v]): [string, unknown] => [f, v])),
        ...(ep.text ?? []).flatMap((f) => HOSTILE_ANYWHERE.map(([, v]): [string, unknown] => [f, v])),
        ...(ep.numbers ?? []).flatMap((f) => HOSTILE_NUMBERS.map(([, v]): [string, unknown] => [f, v])),
        ...(ep.huge ?? []),
      ];
      for (const [field, value] of cases) {
        const res = await call(ep.create, 'POST', withValue(ep.body, field, value));
        const label = `${ep.name} ${field} = ${JSON.stringify(value).slice(0, 40)}`;
        expect(res.status, `${label}: ${JSON.stringify(res.body).slice(0, 300)}`).toBe(400);
        const err = errorOf(res.body);
        expect(err.code, label).toBe('invalid_request');
        expect(String(err.param), label).toMatch(new RegExp(`^${field.replace(/[.[\]]/g, '\\$&')}`));
        expect(err.message, label).toContain(field.split(/[.[]/)[0]);
      }
      expect(await list(ep.list), ep.name).toEqual(before);
      // The base body itself is valid: the 400s came from the hostile values.
      const ok = await call(ep.create, 'POST', ep.body);
      expect(ok.status, JSON.stringify(ok.body).slice(0, 300)).toBe(
        ep.create.includes('pricing-overrides') ? 201 : 200,
      );
    });
  }

  it('refuses ids a path cannot address', async () => {
    for (const id of ['.', '..']) {
      const res = await call('/api/governance/teams', 'POST', { id, name: `dots${id.length}` });
      expect(res.status, id).toBe(400);
      expect(errorOf(res.body).param).toBe('id');
    }
  });

  it('free-text fields keep tabs and line breaks; names do not', async () => {
    const team = await call('/api/governance/teams', 'POST', { name: 'multi', description: 'a\n\tb\r\nc' });
    expect(team.status).toBe(200);
    expect(team.body['description']).toBe('a\n\tb\r\nc');
    const named = await call('/api/governance/teams', 'POST', { name: 'multi\r\nline' });
    expect(named.status).toBe(400);
    expect(errorOf(named.body)).toMatchObject({ code: 'invalid_request', param: 'name' });
  });

  it('refuses hostile record keys (aliases, extra headers)', async () => {
    const before = await list('/api/providers/openai/keys');
    for (const aliases of [{ 'a\u0000': 'b' }, { 'a\r\n': 'b' }, { '\ud800': 'b' }]) {
      const res = await call('/api/providers/openai/keys', 'POST', { name: 'bad-alias', value: 'sk-0123', aliases });
      expect(res.status, JSON.stringify(aliases)).toBe(400);
      expect(errorOf(res.body).message).toContain('invalid key');
    }
    expect(await list('/api/providers/openai/keys')).toEqual(before);
    for (const extra_headers of [{ 'x-a\r\nb': 'v' }, { 'x a': 'v' }, { '': 'v' }]) {
      const res = await call('/api/providers', 'POST', { provider: 'groq', network_config: { extra_headers } });
      expect(res.status, JSON.stringify(extra_headers)).toBe(400);
    }
    expect((await call('/api/providers/groq', 'GET')).status).toBe(404);
  });

  it('refuses impossible and out-of-range dates', async () => {
    const before = await list('/api/governance/virtual-keys');
    for (const expires_at of [
      '2024-02-30T00:00:00Z',
      '0000-01-01T00:00:00Z',
      '2024-01-01',
      '+275760-09-13T00:00:00Z',
      '9999-12-31T23:59:59-14:00',
    ]) {
      const res = await call('/api/governance/virtual-keys', 'POST', { name: 'dated', expires_at });
      expect(res.status, expires_at).toBe(400);
      expect(errorOf(res.body).param).toBe('expires_at');
    }
    expect(await list('/api/governance/virtual-keys')).toEqual(before);
  });

  it('PUT /api/config refuses hostile settings and keeps the stored ones', async () => {
    const before = await list('/api/config');
    for (const client_config of [
      { allowed_origins: ['https://a.example\r\nx: y'] },
      { allowed_origins: ['\u0000'] },
      { allowed_origins: Array.from({ length: 1001 }, (_, i) => `https://${i}.example`) },
      { max_request_body_size_mb: 1e308 },
      { log_retention_days: 1.5 },
      { 'x\u0000': 1 },
    ]) {
      const res = await call('/api/config', 'PUT', { client_config });
      expect(res.status, JSON.stringify(client_config).slice(0, 80)).toBe(400);
      expect(errorOf(res.body).code).toBe('invalid_request');
      expect(String(errorOf(res.body).param)).not.toBe('undefined');
    }
    expect(await list('/api/config')).toEqual(before);
  });
});

describe('provider key values are header-safe', () => {
  it('refuses a value with NUL, CR, LF, other controls or non-ASCII on create, through the API', async () => {
    const before = await list('/api/providers/openai/keys');
    for (const value of ['sk-a\u0000b', 'sk-a\r\nx-injected: 1', 'sk-a\nb', 'sk-é', ' sk-leading', 'sk-trailing\t']) {
      const res = await call('/api/providers/openai/keys', 'POST', { name: 'hostile', value });
      expect(res.status, JSON.stringify(value)).toBe(400);
      const err = errorOf(res.body);
      expect(err).toMatchObject({ code: 'invalid_request', param: 'value' });
      // The message names the character, never the secret.
      expect(err.message).not.toContain('sk-');
    }
    const missing = await call('/api/providers/openai/keys', 'POST', { name: 'no-value' });
    expect(errorOf(missing.body)).toMatchObject({ code: 'invalid_request', param: 'value' });
    expect(await list('/api/providers/openai/keys')).toEqual(before);
  });

  it('refuses them on update and keeps the stored value', async () => {
    const created = await call('/api/providers/openai/keys', 'POST', {
      id: 'k-update',
      name: 'to-update',
      value: 'sk-good-0123456789abcdef',
      models: ['*'],
    });
    expect(created.status).toBe(200);
    const stored = () => gw.rt.state.snapshot.providers.get('openai')?.keysById.get('k-update')?.value;
    expect(stored()).toBe('sk-good-0123456789abcdef');
    for (const value of ['sk-\u0000', 'sk-a\r\nb']) {
      const res = await call('/api/providers/openai/keys/k-update', 'PUT', { name: 'to-update', value });
      expect(res.status).toBe(400);
      expect(errorOf(res.body).param).toBe('value');
    }
    const res = await call('/api/providers/bedrock/keys', 'POST', {
      name: 'br-bad',
      bedrock_key_config: { access_key: 'AKIA\r\n', secret_key: 's', region: 'us-east-1' },
    });
    expect(errorOf(res.body).param).toBe('bedrock_key_config.access_key');
    expect((await call('/api/providers/openai/keys/k-update', 'GET')).body['name']).toBe('to-update');
    expect(stored()).toBe('sk-good-0123456789abcdef');
  });

  it('refuses header-unsafe extra_headers values on update and keeps the stored network config', async () => {
    const before = await call('/api/providers/openai', 'GET');
    const res = await call('/api/providers/openai', 'PUT', {
      network_config: { extra_headers: { 'x-tenant': 'a\r\nx-evil: 1' } },
    });
    expect(res.status).toBe(400);
    expect(errorOf(res.body).param).toBe('network_config.extra_headers.x-tenant');
    expect(await call('/api/providers/openai', 'GET')).toEqual(before);
  });
});

describe('path parameters', () => {
  // 200 characters: under the router's parameter limit, over the longest id or name a row can have.
  const BAD = ['%00', 'a%00b', '%0D%0A', '%7F', '%C2%85', '%1B', 'x'.repeat(200)];
  const PATHS = [
    '/api/providers/{}',
    '/api/providers/{}/keys',
    '/api/providers/openai/keys/{}',
    '/api/governance/virtual-keys/{}',
    '/api/governance/teams/{}',
    '/api/governance/customers/{}',
    '/api/governance/pricing-overrides/{}',
    '/api/governance/routing-rules/{}',
  ];

  it('an id or name with control characters is a 400 naming the parameter, for every method', async () => {
    for (const template of PATHS) {
      for (const bad of BAD) {
        const path = template.replace('{}', bad);
        const methods = template.endsWith('/keys') ? ['GET', 'POST'] : ['GET', 'PUT', 'DELETE'];
        for (const method of methods) {
          const res = await call(path, method, method === 'GET' || method === 'DELETE' ? undefined : { name: 'x' });
          expect(res.status, `${method} ${path}: ${JSON.stringify(res.body).slice(0, 200)}`).toBe(400);
          const err = errorOf(res.body);
          expect(err.code, `${method} ${path}`).toBe('invalid_request');
          expect(['provider', 'key_id', 'id'], `${method} ${path}`).toContain(err.param);
        }
      }
    }
  });

  it('a well-formed id that names nothing stays a 404', async () => {
    for (const template of PATHS) {
      const res = await call(template.replace('{}', 'no-such-row'), 'GET');
      expect(res.status, template).toBe(404);
    }
  });
});
