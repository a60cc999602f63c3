// The per-user flow service on Postgres and PGlite: one live pending flow per binding, expiry on read, the
// transitions, has_active_token, the flow detail fields per mode, and refused ids.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase } from '../../../test/harness/db.ts';
import { migrate } from '../../src/state/db/migrate.ts';
import { openDb } from '../../src/state/db/open.ts';
import type { Db } from '../../src/state/db/types.ts';
import { StateError } from '../../src/state/errors.ts';
import { FLOW_ID, newFlowId, PerUserFlowService } from '../../src/state/services/oauth/per-user-flows.ts';

const DRIVERS = [
  { name: 'postgres', open: async () => openDb({ databaseUrl: await createTestDatabase() }) },
  { name: 'pglite', open: () => openDb({}) },
];

const VK_USER = { flow_mode: 'user', binding_id: 'vk:vk1/bob', user_id: 'vk:vk1/bob', user_name: 'bob' } as const;

describe.each(DRIVERS)('per-user flows on $name', ({ open }) => {
  let db: Db;
  let flows: PerUserFlowService;

  beforeAll(async () => {
    db = await open();
    await migrate(db);
    await db.query(
      `INSERT INTO mcp_clients (id, name, connection_type, connection_string, auth_type, source)
       VALUES ('c1', 'notes', 'http', 'http://x/mcp', 'per_user_oauth', 'api')`,
    );
    await db.query(
      `INSERT INTO oauth_configs (id, kind, mcp_client_id, status, flow_mode) VALUES ('cfg1', 'per_user', 'c1', 'authorized', 'vk')`,
    );
    await db.query(
      `INSERT INTO virtual_keys (id, name, value_hash, value_hint, source) VALUES ('vk1', 'tenant-a', 'h1', 'sk-vk-…', 'api')`,
    );
    flows = new PerUserFlowService(db);
  });
  afterAll(async () => db?.close());

  const openFor = (identity: Parameters<PerUserFlowService['open']>[0]['identity'], ttlMs = 60_000) =>
    flows.open({ oauthConfigId: 'cfg1', mcpClientId: 'c1', identity, ttlMs });

  it('ids carry 192 random bits', () => {
    const ids = new Set(Array.from({ length: 200 }, newFlowId));
    expect(ids.size).toBe(200);
    for (const id of ids) expect(id).toMatch(FLOW_ID);
  });

  it('reuses the live pending flow of a binding; another binding gets its own', async () => {
    const vkIdentity = {
      flow_mode: 'vk',
      binding_id: 'vk1',
      virtual_key_id: 'vk1',
      virtual_key_name: 'tenant-a',
    } as const;
    const first = await openFor(vkIdentity);
    const again = await openFor(vkIdentity);
    expect(first.created).toBe(true);
    expect(again).toEqual({ flow: first.flow, created: false });
    const other = await openFor({
      flow_mode: 'vk',
      binding_id: 'vk2',
      virtual_key_id: 'vk2',
      virtual_key_name: 'gone',
    });
    expect(other.flow.id).not.toBe(first.flow.id);
    // Concurrent opens for one binding: one flow.
    const many = await Promise.all(Array.from({ length: 5 }, () => openFor({ ...VK_USER, binding_id: 'race' })));
    expect(new Set(many.map((m) => m.flow.id)).size).toBe(1);

    const detail = await flows.get(first.flow.id);
    expect(detail).toEqual({
      id: first.flow.id,
      flow_mode: 'vk',
      status: 'pending',
      mcp_client: { client_id: 'c1', name: 'notes' },
      oauth_config_id: 'cfg1',
      expires_at: expect.any(String),
      created_at: expect.any(String),
      has_active_token: false,
      virtual_key: { id: 'vk1', name: 'tenant-a' },
    });
    expect(Date.parse(detail.expires_at) - Date.parse(detail.created_at)).toBeGreaterThan(55_000);
    // A deleted virtual key keeps the name it had.
    expect((await flows.get(other.flow.id)).virtual_key).toEqual({ id: 'vk2', name: 'gone' });
  });

  it('shows the identity fields of user and session flows', async () => {
    const user = await openFor({ ...VK_USER, virtual_key_id: 'vk1' });
    expect(await flows.get(user.flow.id)).toMatchObject({
      flow_mode: 'user',
      user_id: 'vk:vk1/bob',
      user: { id: 'vk:vk1/bob', name: 'bob' },
      virtual_key: { id: 'vk1', name: 'tenant-a' },
    });
    const session = await openFor({
      flow_mode: 'session',
      binding_id: 'vk:vk1/s-1',
      session_id: 's-1',
      virtual_key_id: 'vk1',
    });
    const d = await flows.get(session.flow.id);
    expect(d).toMatchObject({ flow_mode: 'session', session_id: 's-1', virtual_key: { id: 'vk1' } });
    expect(d).not.toHaveProperty('user');
    expect(d).not.toHaveProperty('user_id');
  });

  it('authorized, failed and has_active_token', async () => {
    const f = await openFor({ ...VK_USER, binding_id: 'vk:vk1/carol', user_id: 'vk:vk1/carol' });
    expect(await flows.markAuthorized(f.flow.id)).toBe(true);
    expect(await flows.markAuthorized(f.flow.id)).toBe(false);
    expect(await flows.markFailed(f.flow.id, 'late')).toBe(false);
    expect((await flows.get(f.flow.id)).status).toBe('authorized');

    await db.query(
      `INSERT INTO oauth_tokens (id, oauth_config_id, binding_kind, binding_id, access_token, expires_at)
       VALUES ('t1', 'cfg1', 'user', 'vk:vk1/carol', 'enc', now() + interval '1 hour')`,
    );
    expect(await flows.hasActiveToken('cfg1', 'user', 'vk:vk1/carol')).toBe(true);
    // A new flow for a binding that already holds a token says so (consent re-initiated needlessly).
    const needless = await openFor({ ...VK_USER, binding_id: 'vk:vk1/carol', user_id: 'vk:vk1/carol' });
    expect((await flows.get(needless.flow.id)).has_active_token).toBe(true);
    // Expired without a refresh token: not active.
    await db.query(`UPDATE oauth_tokens SET expires_at = now() - interval '1 second' WHERE id = 't1'`);
    expect(await flows.hasActiveToken('cfg1', 'user', 'vk:vk1/carol')).toBe(false);
    await db.query(`UPDATE oauth_tokens SET refresh_token = 'enc' WHERE id = 't1'`);
    expect(await flows.hasActiveToken('cfg1', 'user', 'vk:vk1/carol')).toBe(true);
    await flows.dropToken('cfg1', 'user', 'vk:vk1/carol');
    expect(await flows.hasActiveToken('cfg1', 'user', 'vk:vk1/carol')).toBe(false);

    const g = await openFor({ ...VK_USER, binding_id: 'vk:vk1/dave', user_id: 'vk:vk1/dave' });
    expect(await flows.markFailed(g.flow.id, 'access_denied: the user said no')).toBe(true);
    expect(await flows.get(g.flow.id)).toMatchObject({
      status: 'failed',
      status_message: 'access_denied: the user said no',
    });
  });

  it('a flow past expires_at reads as expired and cannot be authorized; the binding then gets a new flow', async () => {
    const identity = { ...VK_USER, binding_id: 'vk:vk1/erin', user_id: 'vk:vk1/erin' };
    const f = await openFor(identity, 1);
    await new Promise((r) => setTimeout(r, 20));
    expect(await flows.get(f.flow.id)).toMatchObject({ status: 'expired' });
    expect(await flows.markAuthorized(f.flow.id)).toBe(false);
    const next = await openFor(identity);
    expect(next.created).toBe(true);
    expect(next.flow.id).not.toBe(f.flow.id);
    expect((await flows.list({ mcp_client_id: 'c1', status: 'expired' })).map((d) => d.id)).toContain(f.flow.id);
    expect((await flows.list({ status: 'pending' })).every((d) => d.status === 'pending')).toBe(true);
    expect(await flows.list({ mcp_client_id: 'nope' })).toEqual([]);
  });

  it('unknown ids are not found; malformed ids are invalid before any query', async () => {
    await expect(flows.get(newFlowId())).rejects.toMatchObject({ code: 'not_found' });
    for (const bad of ['', 'abc', `puf_${'x'.repeat(31)}`, `puf_${'x'.repeat(31)}!`, 'a\u0000b', 'x'.repeat(200)]) {
      const err = await flows.get(bad).catch((e: unknown) => e);
      expect(err, JSON.stringify(bad)).toBeInstanceOf(StateError);
      expect(err).toMatchObject({ code: 'invalid', param: 'id' });
    }
  });
});
