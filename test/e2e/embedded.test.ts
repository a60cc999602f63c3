// The embedded default as `make run` starts it: one process, PGlite under GATEWAY_DATA_DIR, in-process
// coordination, a generated admin key printed once.
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOpenAIFake, type OpenAIFake } from '../fakes/openai.ts';
import { startGatewayProcess } from '../harness/gateway-process.ts';
import { freePort } from '../harness/ports.ts';

let dataDir: string;
let fake: OpenAIFake;

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'gw-embedded-'));
  fake = await createOpenAIFake().start();
});
afterAll(async () => {
  await fake?.stop();
  await rm(dataDir, { recursive: true, force: true });
});

describe('embedded default', () => {
  it('prints a generated admin key once, persists state across restarts, and drains on SIGTERM', async () => {
    const env = { GATEWAY_DATA_DIR: dataDir, DATABASE_URL: '', REDIS_URL: '', GATEWAY_ADMIN_API_KEY: '' };
    const first = await startGatewayProcess({ ...env, GATEWAY_LOG_LEVEL: 'info' });
    const adminKey = /gw-admin-[A-Za-z0-9_-]+/.exec(first.output())?.[0];
    expect(adminKey).toBeTruthy();
    const admin = { authorization: `Bearer ${adminKey}`, 'content-type': 'application/json' };
    const ready = await fetch(`${first.url}/ready`);
    expect(await ready.json()).toMatchObject({ database: { kind: 'pglite' }, coordination: { kind: 'memory' } });
    expect(
      (
        await fetch(`${first.url}/api/providers`, {
          method: 'POST',
          headers: admin,
          body: JSON.stringify({ provider: 'openai', network_config: { base_url: fake.url } }),
        })
      ).status,
    ).toBe(201);
    expect(
      (
        await fetch(`${first.url}/api/providers/openai/keys`, {
          method: 'POST',
          headers: admin,
          body: JSON.stringify({ name: 'main', value: 'sk-embedded-0123456789', models: ['*'] }),
        })
      ).status,
    ).toBe(201);
    expect(await first.stop()).toBe(0);

    const second = await startGatewayProcess({ ...env, GATEWAY_LOG_LEVEL: 'info' });
    try {
      expect(second.output()).not.toContain('gw-admin-');
      const client = new OpenAI({ baseURL: `${second.url}/v1`, apiKey: adminKey!, maxRetries: 0 });
      const res = await client.chat.completions.create({
        model: 'openai/gpt-4o-mini',
        messages: [{ role: 'user', content: 'still here' }],
      });
      expect(res.choices[0]?.message.content).toContain('still here');
      expect(second.output()).not.toContain('sk-embedded-0123456789');
    } finally {
      await second.stop();
    }
  });

  it('refuses to start with a clear message when config.json is invalid', async () => {
    const { writeFile } = await import('node:fs/promises');
    const path = join(dataDir, 'bad-config.json');
    await writeFile(
      path,
      JSON.stringify({ providers: { openai: { keys: [{ value: 'x', models: ['*', 'gpt-4o'] }] } } }),
    );
    const port = await freePort();
    const child = spawn(process.execPath, ['gateway/src/main.ts'], {
      env: {
        ...process.env,
        GATEWAY_PORT: String(port),
        GATEWAY_CONFIG: path,
        GATEWAY_DATA_DIR: join(dataDir, 'other'),
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let err = '';
    child.stderr?.on('data', (d: Buffer) => (err += d.toString()));
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    expect(code).toBe(1);
    expect(err).toContain('providers.openai.keys[0].models');
  });
});
