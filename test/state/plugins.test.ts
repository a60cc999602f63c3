// The plugin service on Postgres and on PGlite: validate -> write -> publish, versions and config hashes, the
// config.json path, and what the host makes of a stored row the current schema refuses. Log retention rounds:
// one pod per round deletes, whatever the number of pods.
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { effectivePlugins, PluginHost } from '../../gateway/src/plugins/host.ts';
import { retentionRound } from '../../gateway/src/plugins/logging/retention.ts';
import { openCoordinator } from '../../gateway/src/state/coord/open.ts';
import { migrate } from '../../gateway/src/state/db/migrate.ts';
import { openDb } from '../../gateway/src/state/db/open.ts';
import type { Db } from '../../gateway/src/state/db/types.ts';
import type { ChangeEvent } from '../../gateway/src/state/events.ts';
import { LogStore } from '../../gateway/src/state/services/logs.ts';
import { configHash, PluginService, readPluginRows } from '../../gateway/src/state/services/plugins/index.ts';
import { logEntry } from '../../gateway/test/plugins/log-entry.ts';
import { createTestDatabase, testKeyPrefix } from '../harness/db.ts';
import { dbBackends } from '../harness/db-backends.ts';

const backends = dbBackends('gw-plugins-pglite-');

for (const backend of backends) {
  describe(`plugin service on ${backend.name}`, () => {
    let db: Db;
    let close: () => Promise<void>;
    const events: ChangeEvent[] = [];
    let svc: PluginService;

    beforeAll(async () => {
      ({ db, close } = await backend.open());
      await migrate(db);
      svc = new PluginService({ db, publish: async (e) => void events.push(e), env: {} });
    }, 60_000);
    afterAll(async () => {
      await close?.();
    });

    it('writes, versions and publishes every change; a refused change writes and publishes nothing', async () => {
      events.length = 0;
      const created = await svc.create({ name: 'compat', config: { should_drop_params: true } });
      expect(created).toMatchObject({ name: 'compat', enabled: true, version: 1, source: 'api' });
      expect(created.config).toEqual({
        convert_text_to_chat: false,
        convert_chat_to_responses: false,
        should_drop_params: true,
      });
      const updated = await svc.update('compat', { enabled: false });
      expect(updated).toMatchObject({ enabled: false, version: 2, config_hash: created.config_hash });
      expect(events).toEqual([{ kind: 'plugins' }, { kind: 'plugins' }]);

      await expect(svc.update('compat', { config: { should_drop_params: 1 } })).rejects.toMatchObject({
        code: 'invalid',
        param: 'config.should_drop_params',
      });
      await expect(svc.create({ name: 'compat' })).rejects.toMatchObject({ code: 'conflict' });
      await expect(svc.update('nope', { enabled: true })).rejects.toMatchObject({ code: 'not_found' });
      expect(events).toHaveLength(2);
      expect((await svc.rows()).get('compat')).toMatchObject({ version: 2, enabled: false });

      expect(await svc.reset('compat')).toEqual({ removed: true });
      expect(await svc.reset('compat')).toEqual({ removed: false });
      expect((await svc.rows()).has('compat')).toBe(false);
    });

    it('hashes settings whatever their key order', () => {
      expect(configHash({ a: 1, b: { c: 2, d: 3 } })).toBe(configHash({ b: { d: 3, c: 2 }, a: 1 }));
      expect(configHash({ a: 1 })).not.toBe(configHash({ a: 2 }));
    });

    it('applies config.json entries, keeps the version of an unchanged entry, and removes entries dropped from it', async () => {
      await svc.applyConfigFile([{ name: 'logging', enabled: true, config: { disable_content_logging: true } }]);
      await svc.applyConfigFile([{ name: 'logging', enabled: true, config: { disable_content_logging: true } }]);
      const logging = (await svc.rows()).get('logging');
      expect(logging).toMatchObject({ source: 'config_file', version: 1 });
      await svc.applyConfigFile([{ name: 'logging', enabled: false, config: { disable_content_logging: true } }]);
      expect((await svc.rows()).get('logging')).toMatchObject({ version: 2, enabled: false });
      await svc.update('semantic_cache', { config: { threshold: 0.5 } });
      await svc.applyConfigFile([]);
      const rows = await svc.rows();
      expect(rows.has('logging')).toBe(false);
      expect(rows.get('semantic_cache')).toMatchObject({ source: 'api' });
      await svc.reset('semantic_cache');
    });

    it('runs a plugin on its defaults, reported as an error, when its stored settings no longer pass the schema', async () => {
      // Written behind the service's back, as an older or newer release might have left it.
      await db.query(
        `INSERT INTO plugins (name, enabled, config, config_hash) VALUES ('compat', true, '{"old_flag": true}', 'x')`,
      );
      const rows = new Map((await readPluginRows(db)).map((r) => [r.name, r]));
      const eff = effectivePlugins(rows, {});
      expect(eff.compat).toMatchObject({ enabled: true, config: { convert_text_to_chat: false } });
      expect(eff.compat.error).toMatch(/old_flag/);
      const logged: string[] = [];
      let reload: () => void = () => undefined;
      const host = new PluginHost({
        rows: () => rows,
        onChange: (fn) => {
          reload = fn;
        },
        env: {},
        writeLog: () => undefined,
        log: { error: (_o, msg) => void logged.push(msg) },
      });
      expect(host.status('compat')).toMatchObject({ status: 'error' });
      expect(logged).toHaveLength(1);
      // The periodic reload finds the same row: not logged again.
      reload();
      reload();
      expect(logged).toHaveLength(1);
      await svc.reset('compat');
    });
  });
}

describe('log retention rounds', () => {
  let db: Db;
  beforeAll(async () => {
    db = await openDb({ databaseUrl: await createTestDatabase() });
    await migrate(db);
  }, 60_000);
  afterAll(async () => {
    await db?.close();
  });

  it('deletes old rows once per round however many pods run it', async () => {
    const store = new LogStore(db);
    const now = Date.now();
    const old = { ...logEntry('00000000-0000-7000-8000-000000000001'), created_at: now - 40 * 86_400_000 };
    const recent = logEntry('ffffffff-ffff-7fff-bfff-ffffffffffff');
    await store.insertBatch([old, recent]);
    const prefix = testKeyPrefix();
    const pods = await Promise.all(
      [1, 2, 3].map(() => openCoordinator({ redisUrl: inject('redisUrl'), keyPrefix: prefix })),
    );
    const log = { warn: () => undefined, info: () => undefined };
    const deletes: number[] = [];
    const spy = new LogStore(db);
    const realDelete = spy.deleteOlderThan.bind(spy);
    spy.deleteOlderThan = async (days, at) => {
      deletes.push(days);
      return realDelete(days, at);
    };
    try {
      const results = await Promise.all(
        pods.map((coord, i) =>
          retentionRound({ store: spy, coord, days: () => 30, log, intervalMs: 60_000 }, `pod-${i}`),
        ),
      );
      expect(deletes).toHaveLength(1);
      expect(results.reduce((a, b) => a + b, 0)).toBe(1);
      const { rows } = await db.query<{ id: string }>('SELECT id FROM request_logs');
      expect(rows.map((r) => r.id)).toEqual([recent.id]);
      // Within the round's lock no pod runs it again.
      expect(
        await retentionRound({ store: spy, coord: pods[0]!, days: () => 30, log, intervalMs: 60_000 }, 'pod-0'),
      ).toBe(0);
      expect(deletes).toHaveLength(1);
    } finally {
      await Promise.all(pods.map((p) => p.close()));
    }
  });
});
