// The embedded default as `make run` starts it: one process, PGlite under GATEWAY_DATA_DIR, in-process
// coordination, a generated admin key printed once.
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOpenAIFake, type OpenAIFake } from '../fakes/openai.ts';
import { startGatewayProcess } from '../harness/gateway-process.ts';
import { freePort } from '../harness/ports.ts';
import { waitFor } from '../harness/wait.ts';

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
    ).toBe(200);
    expect(
      (
        await fetch(`${first.url}/api/providers/openai/keys`, {
          method: 'POST',
          headers: admin,
          body: JSON.stringify({ name: 'main', value: 'sk-embedded-0123456789', models: ['*'] }),
        })
      ).status,
    ).toBe(200);
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

describe('launcher (gateway/bin/gateway: make run, npm start, the image and the chart)', () => {
  it('execs node with the memory settings (same pid, so signals reach the gateway) and drains on SIGTERM', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'gw-launcher-'));
    const port = await freePort();
    // Started from a directory with a .env (as `make run` from a checkout with one): the launcher loads it,
    // and a variable set in the environment wins over the file. The system PATH comes first: the launcher must
    // find the project's Node 24 itself.
    await writeFile(join(dir, '.env'), `GATEWAY_PORT=${port}\nGATEWAY_HOST=0.0.0.0\n`);
    const child = spawn(join(process.cwd(), 'gateway/bin/gateway'), [], {
      cwd: dir,
      env: {
        ...process.env,
        PATH: `/usr/local/bin:/usr/bin:/bin:${dirname(process.execPath)}`,
        MALLOC_ARENA_MAX: '',
        GATEWAY_HOST: '127.0.0.1',
        GATEWAY_DATA_DIR: dir,
        GATEWAY_ADMIN_API_KEY: 'launcher-admin-key',
        DATABASE_URL: '',
        REDIS_URL: '',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout?.on('data', (c: Buffer) => {
      out += c.toString('utf8');
    });
    const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
    try {
      const healthy = () =>
        fetch(`http://127.0.0.1:${port}/health`).then(
          (r) => r.ok,
          () => false,
        );
      await waitFor(healthy, 30_000, 'the launched gateway');
      // exec: the launcher's pid is node's, running main.ts with the shipped flags.
      const argv = (await readFile(`/proc/${child.pid}/cmdline`, 'utf8')).split('\0');
      expect(argv.slice(1, 5)).toEqual([
        '--max-semi-space-size=16',
        '--heap-growing-percent=50',
        '--no-allocation-site-pretenuring',
        '--liftoff-only',
      ]);
      expect(argv[5]).toBe('--env-file-if-exists=.env');
      expect(argv[6]).toMatch(/gateway\/bin\/\.\.\/src\/main\.ts$/);
      // The port came from .env; the host from the environment, which wins over the file.
      expect(argv[0]).toMatch(/node_modules\/\.bin\/node$/);
      expect(out).toContain(`"address":"http://127.0.0.1:${port}"`);
      // Start-up progress, in order: a first start says it creates the database.
      const steps = [
        'creating the embedded database (first start',
        '"msg":"database ready"',
        '"msg":"gateway listening"',
      ];
      const at = steps.map((step) => out.indexOf(step));
      expect(at.every((i) => i >= 0)).toBe(true);
      expect([...at].sort((x, y) => x - y)).toEqual(at);
      const environ = (await readFile(`/proc/${child.pid}/environ`, 'utf8')).split('\0');
      // An empty MALLOC_ARENA_MAX counts as unset: the launcher's default applies.
      expect(environ).toContain('MALLOC_ARENA_MAX=2');
      // Fixed glibc thresholds (gateway/bin/gateway says why).
      expect(environ).toContain('MALLOC_MMAP_THRESHOLD_=262144');
      expect(environ).toContain('MALLOC_TRIM_THRESHOLD_=1048576');
      child.kill('SIGTERM');
      expect(await exited).toBe(0);
    } finally {
      child.kill('SIGKILL');
      await rm(dir, { recursive: true, force: true });
    }
  });
});
