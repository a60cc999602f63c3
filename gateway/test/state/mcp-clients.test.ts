// McpClientService on real Postgres and PGlite: what is stored (secrets sealed), what is shown (never a header
// value), what is refused (and then nothing is stored), and how virtual keys' grants follow a client.
import { describe, expect, it } from 'vitest';
import { createSecretBox } from '../../src/crypto/secretbox.ts';
import type { OAuthConfigInput } from '../../src/mcp/oauth/types.ts';
import type { Queryable } from '../../src/state/db/types.ts';
import type { Actor } from '../../src/state/services/catalog.ts';
import { McpClientService, type McpOAuthConfigs } from '../../src/state/services/mcp/clients.ts';
import { readMcpClients } from '../../src/state/services/mcp/rows.ts';
import { drivers, expectStateError, useServiceSuite } from './governance-helpers.ts';

const API: Actor = { source: 'api' };
const K8S: Actor = { source: 'kubernetes', ownerRef: 'tools/fs' };
const box = createSecretBox('test-encryption-key');
const URL_A = 'https://tools.example.com/mcp';
const base = { name: 'fs', connection_type: 'http', connection_string: URL_A };

/** The OAuth part's contract as the service uses it: config rows written in the caller's transaction. */
class RecordingOAuth implements McpOAuthConfigs {
  created: { clientId: string; kind: string; input: OAuthConfigInput }[] = [];
  updated: { configId: string; input: OAuthConfigInput }[] = [];
  async createConfig(q: Queryable, mcpClientId: string, kind: 'server' | 'per_user', input: OAuthConfigInput) {
    const id = `oc-${mcpClientId}`;
    await q.query(
      `INSERT INTO oauth_configs (id, kind, mcp_client_id, status, client_id, flow_mode)
       VALUES ($1, $2, $3, 'pending', $4, $5)`,
      [id, kind, mcpClientId, input.client_id ?? null, kind === 'per_user' ? (input.flow_mode ?? 'vk') : null],
    );
    this.created.push({ clientId: mcpClientId, kind, input });
    return id;
  }
  async updateConfig(_q: Queryable, configId: string, input: OAuthConfigInput) {
    this.updated.push({ configId, input });
  }
}

for (const driver of drivers) {
  describe(`McpClientService on ${driver.name}`, () => {
    const s = useServiceSuite(driver, {
      seed: '',
      table: 'mcp_clients',
      service: (db, publish) => new McpClientService({ db, box, publish }),
    });
    const stored = async () =>
      (await s.db.query<{ n: number }>('SELECT (SELECT count(*) FROM mcp_clients)::int AS n')).rows[0]?.n;
    const addKey = async (name: string, mcp: unknown[]) => {
      await s.db.query(
        `INSERT INTO virtual_keys (id, name, value_hash, value_hint, source, mcp_configs)
         VALUES ($1, $1, $1, 'sk-vk-…', 'api', $2)`,
        [name, JSON.stringify(mcp)],
      );
    };
    const grantsOf = async (name: string) =>
      (await s.db.query<{ m: unknown }>('SELECT mcp_configs AS m FROM virtual_keys WHERE name = $1', [name])).rows[0]
        ?.m;
    const grant = (client: string) => ({ mcp_client_name: client, tools_to_execute: ['*'], tools_to_auto_execute: [] });

    it('creates with the defaults: every tool within the ceilings, connected, pinged; publishes mcp', async () => {
      await s.db.exec('DELETE FROM virtual_keys');
      const v = await s.svc.create(base, API);
      expect(v).toMatchObject({
        name: 'fs',
        connection_type: 'http',
        connection_string: URL_A,
        auth_type: 'none',
        tools_to_execute: ['*'],
        tools_to_auto_execute: ['*'],
        tool_pricing: {},
        is_ping_available: true,
        disabled: false,
        allow_on_all_virtual_keys: false,
        source: 'api',
      });
      expect(v.client_id).toMatch(/^[0-9a-f-]{36}$/);
      expect(v).not.toHaveProperty('headers');
      expect(s.events).toEqual([{ kind: 'mcp' }]);
      expect(await s.svc.get(v.client_id)).toEqual(v);
      expect((await s.svc.list()).map((c) => c.name)).toEqual(['fs']);
    });

    it('seals static headers at rest and shows only their names; [redacted] sent back keeps a value', async () => {
      const v = await s.svc.create(
        {
          ...base,
          client_id: 'fs-1',
          auth_type: 'headers',
          headers: { Authorization: 'Bearer s3cret', 'X-Team': 'a' },
        },
        API,
      );
      expect(v.headers).toEqual({ Authorization: '[redacted]', 'X-Team': '[redacted]' });
      const { rows } = await s.db.query<{ headers: string }>(`SELECT headers FROM mcp_clients WHERE id = 'fs-1'`);
      expect(rows[0]?.headers.startsWith('enc:v1:')).toBe(true);
      expect(rows[0]?.headers).not.toContain('s3cret');
      // GET -> edit -> PUT: the placeholder keeps the secret, a new value replaces, a dropped name goes.
      await s.svc.update('fs-1', { headers: { Authorization: '[redacted]', 'X-Other': 'b' } }, API);
      const [record] = await readMcpClients(s.db, box, { error: () => undefined });
      expect(record?.headers).toEqual({ Authorization: 'Bearer s3cret', 'X-Other': 'b' });
      await s.svc.update('fs-1', { headers: { authorization: 'Bearer n3w' } }, API);
      const [after] = await readMcpClients(s.db, box, { error: () => undefined });
      expect(after?.headers).toEqual({ authorization: 'Bearer n3w' });
      const err = await expectStateError(
        s.svc.update('fs-1', { headers: { 'X-Unknown': '[redacted]' } }, API),
        'invalid',
        'none is stored',
      );
      expect(err.param).toBe('headers.X-Unknown');
      // Other fields of an update leave the headers alone.
      await s.svc.update('fs-1', { disabled: true }, API);
      const [kept] = await readMcpClients(s.db, box, { error: () => undefined });
      expect(kept).toMatchObject({ headers: { authorization: 'Bearer n3w' }, disabled: true });
    });

    it('headers sealed under another key: other fields still update, a placeholder is a clear 400', async () => {
      await s.svc.create({ ...base, client_id: 'h1', auth_type: 'headers', headers: { 'x-key': 'v' } }, API);
      const other = new McpClientService({ db: s.db, box: createSecretBox('another-key'), publish: async () => {} });
      expect((await other.get('h1')).headers).toEqual({});
      await other.update('h1', { disabled: true }, API);
      const [kept] = await readMcpClients(s.db, box, { error: () => undefined });
      expect(kept).toMatchObject({ headers: { 'x-key': 'v' }, disabled: true });
      const err = await expectStateError(
        other.update('h1', { headers: { 'x-key': '[redacted]' } }, API),
        'invalid',
        'send every value again',
      );
      expect(err.param).toBe('headers');
    });

    const bad: [string, Record<string, unknown>, string, string][] = [
      ['stdio', { connection_type: 'stdio' }, 'connection_type', 'does not spawn processes'],
      ['inprocess', { connection_type: 'inprocess' }, 'connection_type', 'no in-process servers'],
      ['unknown type', { connection_type: 'ws' }, 'connection_type', 'http, sse'],
      ['stdio_config', { stdio_config: { command: 'x' } }, 'stdio_config', 'does not spawn'],
      ['name with a dash', { name: 'my-fs' }, 'name', 'letters, digits and _'],
      ['name too long', { name: 'a'.repeat(33) }, 'name', 'at most 32'],
      ['not a URL', { connection_string: 'tools' }, 'connection_string', 'http(s) URL'],
      ['ftp URL', { connection_string: 'ftp://tools.example.com' }, 'connection_string', 'http(s) URL'],
      ['unknown auth type', { auth_type: 'basic' }, 'auth_type', ''],
      ['headers without auth_type headers', { headers: { 'x-a': 'b' } }, 'headers', 'only for auth_type headers'],
      ['auth_type headers without headers', { auth_type: 'headers' }, 'headers', 'required'],
      ['reserved header', { auth_type: 'headers', headers: { Host: 'x' } }, 'headers.Host', 'MCP transport'],
      ['header value with a newline', { auth_type: 'headers', headers: { 'x-a': 'a\nb' } }, 'headers.x-a', ''],
      ['header name not a token', { auth_type: 'headers', headers: { 'x a': 'b' } }, 'headers.x a', ''],
      [
        'too many headers',
        { auth_type: 'headers', headers: Object.fromEntries([...Array(65).keys()].map((i) => [`x-${i}`, 'v'])) },
        'headers',
        'at most 64',
      ],
      [
        'allow_on_all_virtual_keys true',
        { allow_on_all_virtual_keys: true },
        'allow_on_all_virtual_keys',
        'mcp_configs',
      ],
      ['oauth_config without OAuth', { oauth_config: { client_id: 'x' } }, 'oauth_config', 'only for auth_type oauth'],
      [
        'flow_mode on server-level OAuth',
        { auth_type: 'oauth', oauth_config: { flow_mode: 'user' } },
        'oauth_config.flow_mode',
        'per_user_oauth',
      ],
      ['bad OAuth URL', { auth_type: 'oauth', oauth_config: { token_url: 'nope' } }, 'oauth_config.token_url', ''],
      ['unknown OAuth field', { auth_type: 'oauth', oauth_config: { secret: 'x' } }, 'oauth_config.secret', ''],
      ['wildcard mixed', { tools_to_execute: ['*', 'read'] }, 'tools_to_execute', 'must stand alone'],
      ['duplicate tools', { tools_to_auto_execute: ['a', 'a'] }, 'tools_to_auto_execute', 'duplicate'],
      [
        'auto-executed but not executable',
        { tools_to_execute: ['read'], tools_to_auto_execute: ['write'] },
        'tools_to_auto_execute',
        'not in tools_to_execute',
      ],
      ['negative price', { tool_pricing: { read: -1 } }, 'tool_pricing.read', ''],
      ['vk_configs on create', { vk_configs: [] }, 'vk_configs', 'only when editing'],
      ['code mode', { is_code_mode_client: true }, 'is_code_mode_client', ''],
      ['unknown field', { color: 'red' }, 'color', ''],
      ['bad client_id', { client_id: 'a b' }, 'client_id', ''],
    ];
    for (const [label, change, param, text] of bad) {
      it(`refuses ${label} (400 naming ${param}) and stores nothing`, async () => {
        const err = await expectStateError(s.svc.create({ ...base, ...change }, API), 'invalid', text);
        expect(err.param).toBe(param);
        expect(await stored()).toBe(0);
        expect(s.events).toEqual([]);
      });
    }

    it('accepts auto-executed * within a narrowed list, allow_on_all false, scopes as a comma list', async () => {
      const oauth = new RecordingOAuth();
      s.svc.attach({ oauth });
      const v = await s.svc.create(
        {
          ...base,
          auth_type: 'oauth',
          tools_to_execute: ['read'],
          tools_to_auto_execute: ['*'],
          allow_on_all_virtual_keys: false,
          oauth_config: { client_id: 'cid', scopes: 'read, write' },
        },
        API,
      );
      expect(v).toMatchObject({ tools_to_execute: ['read'], tools_to_auto_execute: ['*'] });
      expect(oauth.created[0]?.input).toEqual({ client_id: 'cid', scopes: ['read', 'write'] });
    });

    it('keeps connection type, string and auth type; the same value may be repeated', async () => {
      await s.svc.create({ ...base, client_id: 'c1' }, API);
      for (const [field, value] of [
        ['connection_type', 'sse'],
        ['connection_string', 'https://other.example.com/mcp'],
        ['auth_type', 'headers'],
      ] as const) {
        const err = await expectStateError(
          s.svc.update('c1', { [field]: value }, API),
          'invalid',
          'cannot change after creation',
        );
        expect(err.param).toBe(field);
      }
      const v = await s.svc.update(
        'c1',
        { connection_type: 'http', connection_string: URL_A, auth_type: 'none', tools_to_execute: ['read'] },
        API,
      );
      expect(v).toMatchObject({ connection_type: 'http', tools_to_execute: ['read'], tools_to_auto_execute: ['*'] });
      // The merged result is checked too: narrowing below the auto-executed list is refused.
      await s.svc.update('c1', { tools_to_auto_execute: ['read'] }, API);
      const err = await expectStateError(s.svc.update('c1', { tools_to_execute: ['list'] }, API), 'invalid');
      expect(err.param).toBe('tools_to_auto_execute');
      // A GET view sent back is accepted (read-only fields ignored).
      const view = await s.svc.get('c1');
      await s.svc.update('c1', view, API);
      expect(await s.svc.get('c1')).toMatchObject({ tools_to_execute: ['read'], tools_to_auto_execute: ['read'] });
      await expectStateError(s.svc.update('c1', { client_id: 'c2' }, API), 'invalid', 'path names c1');
    });

    it('refuses a duplicate name or id (409) and an unknown id (404), a bad path id (400)', async () => {
      await s.svc.create({ ...base, client_id: 'c1' }, API);
      expect((await expectStateError(s.svc.create({ ...base, client_id: 'c2' }, API), 'conflict')).param).toBe('name');
      const dupId = await expectStateError(s.svc.create({ ...base, name: 'other', client_id: 'c1' }, API), 'conflict');
      expect(dupId.param).toBe('client_id');
      await s.svc.create({ ...base, name: 'other' }, API);
      expect((await expectStateError(s.svc.update('c1', { name: 'other' }, API), 'conflict')).param).toBe('name');
      await expectStateError(s.svc.get('nope'), 'not_found');
      await expectStateError(s.svc.update('nope', {}, API), 'not_found');
      await expectStateError(s.svc.delete('nope', API), 'not_found');
      await expectStateError(s.svc.status('nope'), 'not_found');
      expect((await expectStateError(s.svc.get('x'.repeat(129)), 'invalid')).param).toBe('id');
      expect(await stored()).toBe(2);
    });

    it('delete removes the client from every virtual key, so a later client of the same name gets no grant', async () => {
      await s.db.exec('DELETE FROM virtual_keys');
      await s.svc.create({ ...base, client_id: 'c1' }, API);
      await s.svc.create({ ...base, name: 'web', client_id: 'c2' }, API);
      await addKey('k1', [grant('web'), grant('fs')]);
      await addKey('k2', [grant('fs')]);
      await addKey('k3', [grant('web')]);
      s.events.length = 0;
      expect(await s.svc.delete('c1', API)).toEqual({ name: 'fs', virtual_keys: ['k1', 'k2'] });
      expect(await grantsOf('k1')).toEqual([grant('web')]);
      expect(await grantsOf('k2')).toEqual([]);
      expect(await grantsOf('k3')).toEqual([grant('web')]);
      expect(s.events).toEqual([{ kind: 'mcp' }, { kind: 'governance' }]);
      await s.svc.create({ ...base, client_id: 'c3' }, API);
      expect(await grantsOf('k2')).toEqual([]);
      // Without grants, only the mcp event.
      s.events.length = 0;
      expect(await s.svc.delete('c3', API)).toEqual({ name: 'fs', virtual_keys: [] });
      expect(s.events).toEqual([{ kind: 'mcp' }]);
    });

    it('a rename takes the grants along (the keys keep their access under the new name)', async () => {
      await s.db.exec('DELETE FROM virtual_keys');
      await s.svc.create({ ...base, client_id: 'c1' }, API);
      await addKey('k1', [grant('other'), grant('fs')]);
      s.events.length = 0;
      await s.svc.update('c1', { name: 'files' }, API);
      expect(await grantsOf('k1')).toEqual([grant('other'), grant('files')]);
      expect(s.events).toEqual([{ kind: 'mcp' }, { kind: 'governance' }]);
    });

    it('vk_configs on an edit replace every key\u2019s grant of the client, in place, in one transaction', async () => {
      await s.db.exec('DELETE FROM virtual_keys');
      await s.svc.create({ ...base, client_id: 'c1' }, API);
      await s.svc.create({ ...base, name: 'web', client_id: 'c2' }, API);
      const fsGrant = { mcp_client_name: 'fs', tools_to_execute: ['read', 'list'], tools_to_auto_execute: ['read'] };
      await addKey('k1', [fsGrant, grant('web')]);
      await addKey('k2', [grant('fs')]);
      await addKey('k3', [grant('web')]);
      s.events.length = 0;
      await s.svc.update(
        'c1',
        {
          vk_configs: [
            { virtual_key_id: 'k1', tools_to_execute: ['read'] },
            { virtual_key_id: 'k3', tools_to_execute: ['*'], tools_to_auto_execute: ['*'] },
          ],
        },
        API,
      );
      // k1 keeps its place and the auto-executed tools that stay executable; k2 loses its grant; k3 gains one.
      expect(await grantsOf('k1')).toEqual([
        { mcp_client_name: 'fs', tools_to_execute: ['read'], tools_to_auto_execute: ['read'] },
        grant('web'),
      ]);
      expect(await grantsOf('k2')).toEqual([]);
      expect(await grantsOf('k3')).toEqual([
        grant('web'),
        { mcp_client_name: 'fs', tools_to_execute: ['*'], tools_to_auto_execute: ['*'] },
      ]);
      expect(s.events).toEqual([{ kind: 'mcp' }, { kind: 'governance' }]);
      // Refused: an unknown key, a key twice, auto outside the executable tools; nothing changes.
      const unknown = await expectStateError(
        s.svc.update('c1', { vk_configs: [{ virtual_key_id: 'nope', tools_to_execute: ['*'] }] }, API),
        'invalid',
        'no virtual key with id nope',
      );
      expect(unknown.param).toBe('vk_configs[0].virtual_key_id');
      const twice = { virtual_key_id: 'k2', tools_to_execute: ['*'] };
      expect((await expectStateError(s.svc.update('c1', { vk_configs: [twice, twice] }, API), 'invalid')).param).toBe(
        'vk_configs[1].virtual_key_id',
      );
      const outside = { virtual_key_id: 'k2', tools_to_execute: ['a'], tools_to_auto_execute: ['b'] };
      expect((await expectStateError(s.svc.update('c1', { vk_configs: [outside] }, API), 'invalid')).param).toBe(
        'vk_configs[0].tools_to_auto_execute[0]',
      );
      expect(await grantsOf('k2')).toEqual([]);
      // A key owned by Kubernetes is edited with kubectl: the whole edit is refused.
      await s.db.query(`UPDATE virtual_keys SET owner_ref = 'ns/k3', source = 'kubernetes' WHERE id = 'k3'`);
      await expectStateError(s.svc.update('c1', { vk_configs: [], disabled: true }, API), 'owned_by_kubernetes', 'k3');
      expect((await s.svc.get('c1')).disabled).toBe(false);
      await s.db.query(`UPDATE virtual_keys SET owner_ref = NULL, source = 'api' WHERE id = 'k3'`);
      // An empty list removes every grant.
      await s.svc.update('c1', { vk_configs: [] }, API);
      expect([await grantsOf('k1'), await grantsOf('k3')]).toEqual([[grant('web')], [grant('web')]]);
    });

    it('OAuth: the configuration is created in the same transaction, rotated on update, gone with the client', async () => {
      const oauth = new RecordingOAuth();
      s.svc.attach({ oauth });
      const v = await s.svc.create(
        { ...base, client_id: 'o1', auth_type: 'oauth', oauth_config: { client_id: 'cid', client_secret: 'sec' } },
        API,
      );
      expect(v.oauth_config_id).toBe('oc-o1');
      expect(oauth.created).toEqual([
        { clientId: 'o1', kind: 'server', input: { client_id: 'cid', client_secret: 'sec' } },
      ]);
      const p = await s.svc.create(
        { ...base, name: 'per', client_id: 'p1', auth_type: 'per_user_oauth', oauth_config: { flow_mode: 'user' } },
        API,
      );
      expect(p.oauth_config_id).toBe('oc-p1');
      expect(oauth.created[1]).toMatchObject({ kind: 'per_user', input: { flow_mode: 'user' } });
      const records = await readMcpClients(s.db, box, { error: () => undefined });
      expect(records.find((r) => r.id === 'p1')?.flow_mode).toBe('user');
      // Rotation keeps the client's id.
      await s.svc.update('o1', { oauth_config: { client_id: 'cid2', client_secret: 'sec2' } }, API);
      expect(oauth.updated).toEqual([{ configId: 'oc-o1', input: { client_id: 'cid2', client_secret: 'sec2' } }]);
      expect((await s.svc.get('o1')).oauth_config_id).toBe('oc-o1');
      expect(await s.svc.status('o1')).toEqual({
        state: 'disconnected',
        state_message: null,
        oauth: { status: 'pending' },
      });
      await s.db.query(
        `UPDATE oauth_configs SET authorize_request_url = 'https://idp.example.com/authorize?x=1',
           expires_at = now() + interval '5 minutes' WHERE id = 'oc-o1'`,
      );
      expect((await s.svc.status('o1')).oauth).toEqual({
        status: 'pending',
        authorize_url: 'https://idp.example.com/authorize?x=1',
      });
      // An expired authorization request is not shown.
      await s.db.query(`UPDATE oauth_configs SET expires_at = now() - interval '1 second' WHERE id = 'oc-o1'`);
      expect((await s.svc.status('o1')).oauth).toEqual({ status: 'pending' });
      await s.svc.delete('o1', API);
      const left = await s.db.query(`SELECT 1 FROM oauth_configs WHERE id = 'oc-o1'`);
      expect(left.rowCount).toBe(0);
    });

    it('a failing OAuth configuration leaves no client behind', async () => {
      s.svc.attach({
        oauth: {
          createConfig: async () => {
            throw new Error('registration refused');
          },
          updateConfig: async () => undefined,
        },
      });
      await expect(s.svc.create({ ...base, auth_type: 'oauth' }, API)).rejects.toThrow('registration refused');
      expect(await stored()).toBe(0);
    });

    it('checks the connection string with the attached guard on create and update', async () => {
      s.svc.attach({
        checkUrl: async (url) => {
          if (url.includes('10.0.0.1')) throw new Error('refused to connect to 10.0.0.1: private address');
        },
      });
      const err = await expectStateError(
        s.svc.create({ ...base, connection_string: 'http://10.0.0.1/mcp' }, API),
        'invalid',
        'private address',
      );
      expect(err.param).toBe('connection_string');
      expect(await stored()).toBe(0);
      await s.svc.create({ ...base, client_id: 'c1' }, API);
      await expectStateError(s.svc.update('c1', { connection_string: 'http://10.0.0.1/mcp' }, API), 'invalid');
    });

    it('rows owned by Kubernetes refuse the API (409) and take the operator', async () => {
      await s.svc.create({ ...base, client_id: 'k1' }, K8S);
      expect((await s.svc.get('k1')).owner_ref).toBe('tools/fs');
      await expectStateError(s.svc.update('k1', { disabled: true }, API), 'owned_by_kubernetes', 'kubectl');
      await expectStateError(s.svc.delete('k1', API), 'owned_by_kubernetes');
      await s.svc.update('k1', { disabled: true }, K8S);
      await s.svc.delete('k1', K8S);
      expect(await stored()).toBe(0);
    });

    it('status shows the state a gateway pod reported', async () => {
      await s.svc.create({ ...base, client_id: 'c1' }, API);
      await s.db.query(`UPDATE mcp_clients SET state = 'error', state_message = 'connection refused' WHERE id = 'c1'`);
      expect(await s.svc.status('c1')).toEqual({ state: 'error', state_message: 'connection refused' });
    });
  });
}
