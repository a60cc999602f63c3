// A real gateway in the test process, on a free loopback port, on real Postgres + Redis from the harness
// (or the embedded default: PGlite in a temporary directory + in-process coordination).

import { inject } from 'vitest';
import { type BootOptions, bootGateway, createLogger, type Gateway } from '../../gateway/src/boot.ts';
import { readEnvSettings } from '../../gateway/src/config/load.ts';
import { ConfigFile } from '../../gateway/src/config/schema.ts';
import { createTestDatabase, testKeyPrefix } from './db.ts';
import { tempDir } from './tmpdir.ts';

export const ADMIN_KEY = 'test-admin-key-0123456789';
export const INFERENCE_TOKEN = 'test-inference-token-0123456789';

export interface TestGatewayOptions {
  /** config.json content (validated like the real file). */
  config?: Record<string, unknown>;
  /** `shared`: harness Postgres + Redis (default); `embedded`: PGlite (temporary directory) + in-process. */
  backend?: 'shared' | 'embedded';
  /** Share an existing database and Redis prefix (several gateways as pods). */
  databaseUrl?: string;
  redisKeyPrefix?: string;
  encryptionKey?: string;
  /** Further environment variables (e.g. GATEWAY_REQUEST_TIMEOUT_MS). */
  env?: Record<string, string>;
  /** Settings of the `/ws` live-update hub (a short heartbeat, a low client bound). */
  live?: BootOptions['live'];
}

export interface TestGateway extends Gateway {
  databaseUrl: string | undefined;
  redisKeyPrefix: string | undefined;
  /** fetch against the gateway with the admin key. */
  admin(path: string, init?: { method?: string; body?: unknown; headers?: Record<string, string> }): Promise<Response>;
}

export async function startTestGateway(opts: TestGatewayOptions = {}): Promise<TestGateway> {
  const shared = (opts.backend ?? 'shared') === 'shared';
  const databaseUrl = shared ? (opts.databaseUrl ?? (await createTestDatabase())) : undefined;
  const redisKeyPrefix = shared ? (opts.redisKeyPrefix ?? testKeyPrefix()) : undefined;
  // Each gateway its own data directory (its spool; embedded: its PGlite), as each pod has its own disk;
  // removed on close. Never the repository's ./data, which would carry state from one run to the next.
  const dataDir = opts.env?.['GATEWAY_DATA_DIR'] ? undefined : await tempDir('gw-data-');
  const env = readEnvSettings({
    GATEWAY_PORT: '0',
    GATEWAY_HOST: '127.0.0.1',
    GATEWAY_ADMIN_API_KEY: ADMIN_KEY,
    GATEWAY_LOG_LEVEL: process.env['TEST_GATEWAY_LOG_LEVEL'] ?? 'silent',
    ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}),
    ...(shared ? { REDIS_URL: inject('redisUrl') } : {}),
    ...(opts.encryptionKey ? { GATEWAY_ENCRYPTION_KEY: opts.encryptionKey } : {}),
    ...(dataDir ? { GATEWAY_DATA_DIR: dataDir.path } : {}),
    ...opts.env,
  });
  const file = ConfigFile.parse({
    auth: { inference_tokens: [{ name: 'test', value: INFERENCE_TOKEN }] },
    ...opts.config,
  });
  const gw = await bootGateway({
    env,
    file,
    logger: createLogger(env.logLevel),
    ...(redisKeyPrefix ? { redisKeyPrefix } : {}),
    ...(opts.live ? { live: opts.live } : {}),
  }).catch(async (err: unknown) => {
    await dataDir?.remove();
    throw err;
  });
  return {
    ...gw,
    async close() {
      await gw.close();
      await dataDir?.remove();
    },
    databaseUrl,
    redisKeyPrefix,
    admin(path, init = {}) {
      return fetch(gw.url + path, {
        method: init.method ?? 'GET',
        headers: {
          authorization: `Bearer ${ADMIN_KEY}`,
          ...(init.body !== undefined ? { 'content-type': 'application/json' } : {}),
          ...init.headers,
        },
        ...(init.body !== undefined ? { body: JSON.stringify(init.body) } : {}),
      });
    },
  };
}

/** An admin call to the gateway at `baseUrl` (e.g. a gateway process); its JSON answer, or a thrown error past 2xx. */
export async function adminCall(
  baseUrl: string,
  method: string,
  path: string,
  body?: unknown,
): Promise<Record<string, unknown>> {
  const res = await fetch(baseUrl + path, {
    method,
    headers: { authorization: `Bearer ${ADMIN_KEY}`, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const json = (await res.json()) as Record<string, unknown>;
  if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(json)}`);
  return json;
}
