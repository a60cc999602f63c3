// Issue 19 (memory): a gateway loads an optional subsystem's packages only when it is used. A deployment without
// MCP, tracing, Vertex, Bedrock, routing rules or Redis must not carry their code (measured: ~26 MB of V8 heap for
// the packages below), and each database driver is loaded only when it is the one in use.
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOpenAIFake, type OpenAIFake } from '../fakes/openai.ts';
import { startGatewayProcess } from '../harness/gateway-process.ts';
import { type PostgresServer, startPostgres } from '../harness/postgres.ts';
import { type RedisServer, startRedis } from '../harness/redis.ts';

const HOOK = join(process.cwd(), 'test/harness/module-log.ts');

/** Packages of features that this test's gateways do not use (module URLs contain these paths). */
const OPTIONAL = [
  '/node_modules/@modelcontextprotocol/sdk/',
  '/node_modules/openid-client/',
  '/node_modules/oauth4webapi/',
  '/node_modules/@opentelemetry/sdk-trace',
  '/node_modules/@opentelemetry/exporter-trace-otlp-http/',
  '/node_modules/@opentelemetry/resources/',
  '/node_modules/@opentelemetry/semantic-conventions/',
  '/node_modules/google-auth-library/',
  '/node_modules/@smithy/',
  '/node_modules/@aws-sdk/',
  '/node_modules/@aws-crypto/',
  '/node_modules/@bufbuild/cel/',
  // Imagen edit masks are converted in a worker thread; the gateway's own thread never loads the PNG codec.
  '/node_modules/pngjs/',
];
const PGLITE = '/node_modules/@electric-sql/pglite/';
const PG = ['/node_modules/pg/', '/node_modules/pg-copy-streams/'];
const IOREDIS = '/node_modules/ioredis/';

let dir: string;
let fake: OpenAIFake;
let postgres: PostgresServer;
let redis: RedisServer;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'gw-modules-'));
  fake = await createOpenAIFake().start();
  [postgres, redis] = await Promise.all([startPostgres(), startRedis()]);
});
afterAll(async () => {
  await Promise.all([fake?.stop(), postgres?.stop(), redis?.stop()]);
  await rm(dir, { recursive: true, force: true });
});

/** Starts a gateway with the module log, sends one chat completion, stops it and returns the modules it loaded. */
async function modulesOfOneRequest(name: string, env: Record<string, string>): Promise<string[]> {
  const log = join(dir, `${name}.log`);
  const config = join(dir, `${name}.json`);
  await writeFile(
    config,
    JSON.stringify({
      client: { enforce_auth_on_inference: false },
      providers: {
        openai: {
          network_config: { base_url: fake.url, max_retries: 0 },
          keys: [{ name: 'main', value: 'sk-modules-0123456789', models: ['*'] }],
        },
      },
    }),
  );
  const gateway = await startGatewayProcess(
    {
      GATEWAY_CONFIG: config,
      GATEWAY_DATA_DIR: join(dir, `${name}-data`),
      GATEWAY_ADMIN_API_KEY: 'modules-admin-key',
      NODE_OPTIONS: `--import ${HOOK}`,
      MODULE_LOG_FILE: log,
      ...env,
    },
    60_000,
  );
  try {
    const client = new OpenAI({ baseURL: `${gateway.url}/v1`, apiKey: 'modules-admin-key', maxRetries: 0 });
    const res = await client.chat.completions.create({
      model: 'openai/gpt-4o-mini',
      messages: [{ role: 'user', content: 'which modules' }],
    });
    expect(res.choices[0]?.message.content).toContain('which modules');
  } finally {
    expect(await gateway.stop()).toBe(0);
  }
  const pid = String(gateway.child.pid);
  const lines = (await readFile(log, 'utf8')).split('\n');
  const urls = lines.filter((l) => l.startsWith(`${pid} `)).map((l) => l.slice(pid.length + 1));
  expect(urls.length).toBeGreaterThan(100);
  return urls;
}

const loaded = (urls: readonly string[], parts: readonly string[]): string[] =>
  parts.filter((p) => urls.some((u) => u.includes(p)));

describe('optional subsystems are loaded only when used', () => {
  it('the embedded default loads PGlite, and none of the optional packages, Redis or Postgres clients', async () => {
    const urls = await modulesOfOneRequest('embedded', { DATABASE_URL: '', REDIS_URL: '' });
    expect(loaded(urls, [PGLITE])).toEqual([PGLITE]);
    expect(loaded(urls, [...OPTIONAL, ...PG, IOREDIS])).toEqual([]);
  });

  it('on Postgres and Redis: pg and ioredis, and neither PGlite nor the optional packages', async () => {
    const urls = await modulesOfOneRequest('production', { DATABASE_URL: postgres.url, REDIS_URL: redis.url });
    expect(loaded(urls, [...PG, IOREDIS])).toEqual([...PG, IOREDIS]);
    expect(loaded(urls, [PGLITE, ...OPTIONAL])).toEqual([]);
  });
});
