// Owner rows of stored Responses expire with the responses: the retention round deletes the `response` rows and
// those of their output items (`response_item`) older than STORED_RESPONSE_DAYS (the provider keeps a stored
// response 30 days), on both database backends, and keeps every other kind (files, batches, ... live until deleted
// at the provider) and every recent row. A response and its items are recorded in one statement.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { retentionRound } from '../../gateway/src/plugins/logging/retention.ts';
import { createMemoryCoordinator } from '../../gateway/src/state/coord/memory.ts';
import { migrate } from '../../gateway/src/state/db/migrate.ts';
import type { Db } from '../../gateway/src/state/db/types.ts';
import { LogStore } from '../../gateway/src/state/services/logs.ts';
import { ResourceOwnerStore, STORED_RESPONSE_DAYS } from '../../gateway/src/state/services/resource-owners.ts';
import { dbBackends } from '../harness/db-backends.ts';

const DAY = 86_400_000;

describe.each(dbBackends('gw-owner-expiry-'))('owner rows of stored responses on $name', (backend) => {
  let db: Db;
  let close: () => Promise<void>;
  beforeAll(async () => {
    ({ db, close } = await backend.open());
    await migrate(db);
  }, 60_000);
  afterAll(async () => {
    await close?.();
  });

  async function row(kind: string, id: string, ageDays: number, now: number): Promise<void> {
    await db.query(
      `INSERT INTO resource_owners (provider, kind, resource_id, owner, virtual_key_id, key_id, created_at)
       VALUES ('openai', $1, $2, 'vk:k1', 'k1', 'oa', $3)`,
      [kind, id, new Date(now - ageDays * DAY)],
    );
  }

  it('are deleted by the retention round once the provider has expired them, items too; other kinds stay', async () => {
    const now = Date.now();
    await row('response', 'resp_old', STORED_RESPONSE_DAYS + 1, now);
    await row('response', 'resp_recent', STORED_RESPONSE_DAYS - 1, now);
    await row('response_item', 'msg_old', STORED_RESPONSE_DAYS + 1, now);
    await row('response_item', 'rs_old', STORED_RESPONSE_DAYS + 2, now);
    await row('response_item', 'msg_recent', STORED_RESPONSE_DAYS - 1, now);
    await row('file', 'file_old', 400, now);
    await row('batch', 'batch_old', 400, now);
    const owners = new ResourceOwnerStore(db);
    const coord = createMemoryCoordinator({ keyPrefix: '' });
    try {
      const deleted = await retentionRound(
        {
          store: new LogStore(db),
          coord,
          days: () => 30,
          expireOwners: (at) => owners.expireStoredResponses(at),
          log: { warn: () => undefined, info: () => undefined },
          now: () => now,
        },
        'pod-0',
      );
      expect(deleted).toBe(3);
    } finally {
      await coord.close();
    }
    const { rows } = await db.query<{ resource_id: string }>('SELECT resource_id FROM resource_owners ORDER BY 1');
    expect(rows.map((r) => r.resource_id)).toEqual(['batch_old', 'file_old', 'msg_recent', 'resp_recent']);
    expect(await owners.get('openai', 'response', 'resp_recent')).toMatchObject({ owner: 'vk:k1' });
    expect(await owners.get('openai', 'response_item', 'msg_recent')).toMatchObject({ owner: 'vk:k1' });
  });

  it('records a response and its items in one statement; an id that has an owner keeps it', async () => {
    const owners = new ResourceOwnerStore(db);
    await owners.record({
      provider: 'openai',
      kind: 'response_item',
      resourceId: 'msg_taken',
      owner: 'vk:other',
      virtualKeyId: 'other',
      keyId: 'oa',
    });
    let statements = 0;
    const counting: Db = {
      ...db,
      kind: db.kind,
      query: (sql, params) => {
        statements++;
        return db.query(sql, params);
      },
    };
    await new ResourceOwnerStore(counting).recordAll({ owner: 'vk:k2', virtualKeyId: 'k2', keyId: 'oa' }, 'openai', [
      { kind: 'response', resourceId: 'resp_many' },
      ...Array.from({ length: 50 }, (_, i) => ({ kind: 'response_item', resourceId: `fc_${i}` })),
      { kind: 'response_item', resourceId: 'msg_taken' },
      { kind: 'response_item', resourceId: 'fc_0' },
    ]);
    expect(statements).toBe(1);
    const mine = await owners.ownedAmong('openai', 'response_item', 'vk:k2', ['fc_0', 'fc_49', 'msg_taken']);
    expect([...mine].sort()).toEqual(['fc_0', 'fc_49']);
    expect(await owners.get('openai', 'response', 'resp_many')).toEqual({
      owner: 'vk:k2',
      virtualKeyId: 'k2',
      keyId: 'oa',
    });
    expect(await owners.get('openai', 'response_item', 'msg_taken')).toMatchObject({ owner: 'vk:other' });
  });
});
