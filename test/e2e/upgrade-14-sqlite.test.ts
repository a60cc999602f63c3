// The embedded default importing the reference gateway's 1.4.19 SQLite store (GATEWAY_IMPORT_14_SQLITE): the
// same expected results as the Postgres upgrade (fixture README; API-created rows matched by name), the file
// only read, the import done once, and the dry run writing nothing.
import { existsSync } from 'node:fs';
import { copyFile, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { providerCatalog } from '../../gateway/src/providers/registry.ts';
import { upgradeDryRun } from '../../gateway/src/state/upgrade/index.ts';
import { createOpenAIFake } from '../fakes/openai.ts';
import { startTestGateway, type TestGateway } from '../harness/gateway.ts';
import { type TempDir, tempDir } from '../harness/tmpdir.ts';
import { expectUpgraded, type Json, SQLITE, VK_FILE_ALLOWED, VK_FILE_OPEN } from './upgrade-14-helpers.ts';

describe('import of the 1.4.19 SQLite store into the embedded default', () => {
  let dir: TempDir;
  let file: string;
  let gw: TestGateway;
  const openai = createOpenAIFake();
  const start = () =>
    startTestGateway({
      backend: 'embedded',
      env: { GATEWAY_DATA_DIR: join(dir.path, 'data'), GATEWAY_IMPORT_14_SQLITE: file },
    });

  beforeAll(async () => {
    await openai.start();
    dir = await tempDir('upgrade-14-');
    // A copy: the test also proves the import leaves the file as it was.
    file = join(dir.path, 'config.db');
    await copyFile(SQLITE, file);
    gw = await start();
  });
  afterAll(async () => {
    await gw?.close();
    await openai.stop();
    await dir?.remove();
  });

  it('dry run: prints the changes and writes nothing', async () => {
    const lines = (await upgradeDryRun({ sqliteFile: SQLITE, catalog: providerCatalog })).join('\n');
    expect(lines).toContain('provider key bedrock/bedrock-us: bedrock deployments → aliases');
    expect(lines).toContain('virtual key api-inactive: no provider_configs');
    expect(lines).toContain('WARN budget ');
    expect(lines).not.toContain('fixture-bedrock-secret-1');
    // Nothing appears beside the store: SQLite's -shm/-wal of a WAL database are made beside a copy.
    expect(existsSync(`${SQLITE}-shm`) || existsSync(`${SQLITE}-wal`)).toBe(false);
  });

  it('carries every object over with rules 1-7 (the fixture README)', async () => {
    await expectUpgraded(gw);
  });

  it('reads the file without changing it', async () => {
    expect(await readFile(file)).toEqual(await readFile(SQLITE));
    expect((await stat(file)).size).toBe((await stat(SQLITE)).size);
  });

  it('the 1.4.x virtual keys work as the rules say', async () => {
    const res = await gw.admin('/api/providers/openai', {
      method: 'PUT',
      body: { network_config: { base_url: openai.url, max_retries: 0 } },
    });
    expect(res.status).toBe(200);
    const client = (key: string) => new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: key, maxRetries: 0 });
    openai.reset();
    await client(VK_FILE_OPEN).chat.completions.create({
      model: 'openai/gpt-4o-mini',
      messages: [{ role: 'user', content: 'hi' }],
    });
    await client(VK_FILE_ALLOWED).chat.completions.create({
      model: 'openai/gpt-4o-mini',
      messages: [{ role: 'user', content: 'hi' }],
    });
    expect(openai.last().headers['authorization']).toBe('Bearer sk-fixture-openai-2');
    const blocked = await client(VK_FILE_ALLOWED)
      .chat.completions.create({ model: 'anthropic/claude-3-haiku', messages: [{ role: 'user', content: 'hi' }] })
      .catch((e: unknown) => e as InstanceType<typeof OpenAI.APIError>);
    expect(blocked).toBeInstanceOf(OpenAI.APIError);
    expect((blocked as InstanceType<typeof OpenAI.APIError>).status).toBe(403);
    expect(String((blocked as Error).message)).toContain('rule: key_ids');
  });

  it('a second start with the setting still there imports nothing again', async () => {
    const before = (await (await gw.admin('/api/governance/virtual-keys')).json()) as Json;
    await gw.close();
    gw = await start();
    const after = (await (await gw.admin('/api/governance/virtual-keys')).json()) as Json;
    expect(after).toEqual(before);
    await expectUpgraded(gw);
  });
});

describe('import refusals', () => {
  it('a file that is not a 1.4.x store stops the start and names what is missing', async () => {
    const dir = await tempDir('upgrade-14-bad-');
    try {
      await dir.write('empty.db', '');
      await expect(
        startTestGateway({
          backend: 'embedded',
          env: { GATEWAY_DATA_DIR: join(dir.path, 'data'), GATEWAY_IMPORT_14_SQLITE: join(dir.path, 'empty.db') },
        }),
      ).rejects.toThrow(/not a 1\.4\.x configuration store/);
    } finally {
      await dir.remove();
    }
  });
});
