// config.json loads into the database at every start, idempotently, without touching API-created rows.
import { describe, expect, it } from 'vitest';
import { createTestDatabase } from '../harness/db.ts';
import { startTestGateway } from '../harness/gateway.ts';

type Key = { id: string; name: string; models: string[]; value: string; source: string };

async function keys(gw: Awaited<ReturnType<typeof startTestGateway>>, provider: string): Promise<Key[]> {
  return ((await (await gw.admin(`/api/providers/${provider}/keys`)).json()) as { keys: Key[] }).keys;
}

describe('config.json and the database', () => {
  it('loads providers and keys idempotently and leaves API-created keys alone', async () => {
    const databaseUrl = await createTestDatabase();
    const config = (value: string) => ({
      providers: {
        openai: {
          network_config: { base_url: 'http://127.0.0.1:9' },
          keys: [{ name: 'main', value, models: ['gpt-4o'] }],
        },
      },
    });
    const first = await startTestGateway({ databaseUrl, config: config('sk-first-0123456789abc') });
    const [fileKey] = await keys(first, 'openai');
    expect(fileKey).toMatchObject({ name: 'main', source: 'config', models: ['gpt-4o'] });
    const added = await first.admin('/api/providers/openai/keys', {
      method: 'POST',
      body: { name: 'from-api', value: 'sk-api-0123456789abcdef', models: ['*'] },
    });
    expect(added.status).toBe(200);
    await first.close();

    const second = await startTestGateway({ databaseUrl, config: config('sk-second-0123456789ab') });
    try {
      const after = await keys(second, 'openai');
      expect(after.map((k) => [k.name, k.source]).sort()).toEqual([
        ['from-api', 'api'],
        ['main', 'config'],
      ]);
      expect(after.find((k) => k.name === 'main')?.id).toBe(fileKey!.id);
      // The file's new value replaced the stored one.
      expect(second.rt.state.snapshot.providers.get('openai')?.keysById.get(fileKey!.id)?.value).toBe(
        'sk-second-0123456789ab',
      );
    } finally {
      await second.close();
    }
  });

  it('compatibility mode (version 1) reads an empty models list in the file as all models', async () => {
    const gw = await startTestGateway({
      config: {
        version: 1,
        providers: { openai: { keys: [{ name: 'legacy', value: 'sk-legacy-0123456789', models: [] }] } },
      },
    });
    try {
      expect((await keys(gw, 'openai'))[0]?.models).toEqual(['*']);
      // The REST API follows the 1.5 rules whatever the file says.
      const viaApi = await gw.admin('/api/providers/openai/keys', {
        method: 'POST',
        body: { name: 'new', value: 'sk-new-0123456789abcd', models: [] },
      });
      expect(((await viaApi.json()) as Key).models).toEqual([]);
    } finally {
      await gw.close();
    }
  });

  it('stores key secrets encrypted when GATEWAY_ENCRYPTION_KEY is set', async () => {
    const gw = await startTestGateway({
      encryptionKey: 'an-encryption-key-of-enough-length',
      config: { providers: { anthropic: { keys: [{ name: 'a', value: 'sk-ant-secret-0123456789', models: ['*'] }] } } },
    });
    try {
      const { rows } = await gw.rt.state.db.query<{ secret: string }>('SELECT secret FROM provider_keys');
      expect(rows[0]?.secret.startsWith('enc:v1:')).toBe(true);
      expect(rows[0]?.secret).not.toContain('sk-ant-secret');
      expect(gw.rt.state.snapshot.providers.get('anthropic')?.keys[0]?.value).toBe('sk-ant-secret-0123456789');
    } finally {
      await gw.close();
    }
  });
});
