// Providers and their keys: validate -> write -> publish. The one write path for the REST API,
// config.json at start and the operator.
import { z } from 'zod';
import { type ConfigFile, KeyInput, NetworkConfigInput, PROVIDER_NAME } from '../../config/schema.ts';
import type { SecretBox } from '../../crypto/secretbox.ts';
import { DbError } from '../db/errors.ts';
import type { Db, Queryable } from '../db/types.ts';
import { StateError } from '../errors.ts';
import type { ChangeEvent } from '../events.ts';
import { newId, stableId } from '../ids.ts';
import type { Actor, ProviderCatalog } from './catalog.ts';
import { checkPathParam, invalidInput } from './input.ts';
import { iso, type KeyRow, KeySecrets, keyView, mergeSecrets, splitKeyInput } from './key-record.ts';
import { checkUnchanged, type UpdateOptions } from './partial.ts';

export const ProviderInput = z.strictObject({
  provider: z.string().regex(PROVIDER_NAME, 'provider names are lower-case letters, digits, - and _').optional(),
  network_config: NetworkConfigInput.optional(),
});
export type ProviderInput = z.infer<typeof ProviderInput>;

export interface ProviderRow {
  name: string;
  network_config: NetworkConfigInput;
  source: string;
  owner_ref: string | null;
  created_at: Date | string;
  updated_at: Date | string;
}

export interface ProviderServiceDeps {
  db: Db;
  box: SecretBox;
  catalog: ProviderCatalog;
  publish: (event: ChangeEvent) => Promise<void>;
}

const KEYS_MOVED = 'keys are not part of provider payloads; manage them with /api/providers/{provider}/keys';

export class ProviderService {
  private readonly deps: ProviderServiceDeps;
  constructor(deps: ProviderServiceDeps) {
    this.deps = deps;
  }

  async list(): Promise<Record<string, unknown>[]> {
    const { rows } = await this.deps.db.query<ProviderRow & Record<string, unknown>>(
      'SELECT * FROM providers ORDER BY name',
    );
    return rows.map(providerView);
  }

  async get(name: string): Promise<Record<string, unknown>> {
    return providerView(await this.row(this.deps.db, name));
  }

  async create(body: unknown, actor: Actor, nameFromPath?: string): Promise<Record<string, unknown>> {
    const input = parseProviderBody(body);
    const name = nameFromPath ?? input.provider;
    if (!name) throw new StateError('invalid', 'provider: required', 'provider');
    this.checkKnown(name);
    const owner = actor.source === 'kubernetes' ? actor.ownerRef : null;
    const { rowCount } = await this.deps.db.query(
      `INSERT INTO providers (name, network_config, source, owner_ref) VALUES ($1, $2, $3, $4)
       ON CONFLICT (name) DO NOTHING`,
      [name, JSON.stringify(input.network_config ?? {}), actor.source, owner],
    );
    if (rowCount === 0) throw new StateError('conflict', `provider ${name} already exists`, 'provider');
    await this.deps.publish({ kind: 'provider', name });
    return this.get(name);
  }

  async update(name: string, body: unknown, actor: Actor, opts?: UpdateOptions): Promise<Record<string, unknown>> {
    checkPathParam(name, 'provider');
    const input = parseProviderBody(body);
    if (input.provider && input.provider !== name) {
      throw new StateError(
        'invalid',
        `provider: the body names ${input.provider} but the path names ${name}`,
        'provider',
      );
    }
    await this.deps.db.transaction(async (tx) => {
      const row = await this.row(tx, name, true);
      checkUnchanged(row.updated_at, opts);
      checkOwner(row, actor, 'Provider');
      await tx.query('UPDATE providers SET network_config = $2, updated_at = now() WHERE name = $1', [
        name,
        JSON.stringify(input.network_config ?? {}),
      ]);
    });
    await this.deps.publish({ kind: 'provider', name });
    return this.get(name);
  }

  async delete(name: string, actor: Actor): Promise<void> {
    await this.deps.db.transaction(async (tx) => {
      const row = await this.row(tx, name, true);
      checkOwner(row, actor, 'Provider');
      if (actor.source !== 'kubernetes') {
        const keys = await tx.query<{ id: string }>('SELECT id FROM provider_keys WHERE provider = $1', [name]);
        await refuseIfReferenced(
          tx,
          keys.rows.map((k) => k.id),
        );
      }
      await tx.query('DELETE FROM providers WHERE name = $1', [name]);
    });
    await this.deps.publish({ kind: 'provider', name });
  }

  async listKeys(provider: string): Promise<Record<string, unknown>[]> {
    await this.row(this.deps.db, provider);
    const { rows } = await this.deps.db.query<KeyRow & Record<string, unknown>>(
      'SELECT * FROM provider_keys WHERE provider = $1 ORDER BY created_at, name',
      [provider],
    );
    return rows.map((r) => keyView(r, this.secrets(r)));
  }

  /** Every key of every provider (values redacted), each with its provider. */
  async listAllKeys(): Promise<Record<string, unknown>[]> {
    const { rows } = await this.deps.db.query<KeyRow & Record<string, unknown>>(
      'SELECT * FROM provider_keys ORDER BY provider, created_at, name',
    );
    return rows.map((r) => ({ ...keyView(r, this.secrets(r)), provider: r.provider }));
  }

  async getKey(provider: string, id: string): Promise<Record<string, unknown>> {
    const r = await this.keyRow(this.deps.db, provider, id);
    return keyView(r, this.secrets(r));
  }

  async addKey(provider: string, body: unknown, actor: Actor): Promise<Record<string, unknown>> {
    checkPathParam(provider, 'provider');
    const input = parseKeyBody(body);
    const id = input.id ?? newId();
    await this.deps.db.transaction(async (tx) => {
      const prov = await this.row(tx, provider, true);
      this.checkKey(provider, input, prov);
      await this.insertKey(tx, provider, id, input, actor);
    });
    await this.deps.publish({ kind: 'provider', name: provider });
    return this.getKey(provider, id);
  }

  async updateKey(
    provider: string,
    id: string,
    body: unknown,
    actor: Actor,
    opts?: UpdateOptions,
  ): Promise<Record<string, unknown>> {
    checkPathParam(provider, 'provider');
    checkPathParam(id, 'key_id');
    const input = parseKeyBody(body);
    if (input.id && input.id !== id) {
      throw new StateError('invalid', `id: the body names key ${input.id} but the path names ${id}`, 'id');
    }
    await this.deps.db.transaction(async (tx) => {
      const prov = await this.row(tx, provider, true);
      const prev = await this.keyRow(tx, provider, id, true);
      checkUnchanged(prev.updated_at, opts);
      checkOwner(prev, actor, 'ProviderKey');
      const { columns, secrets } = splitKeyInput(input);
      const merged = mergeSecrets(secrets, this.secrets(prev));
      this.checkKey(provider, { ...input, value: merged.value }, prov);
      await this.writeKey(tx, 'update', provider, id, input.name ?? prev.name, columns, merged, actor);
    });
    await this.deps.publish({ kind: 'provider', name: provider });
    return this.getKey(provider, id);
  }

  async deleteKey(provider: string, id: string, actor: Actor): Promise<void> {
    await this.deps.db.transaction(async (tx) => {
      await this.row(tx, provider, true);
      const prev = await this.keyRow(tx, provider, id, true);
      checkOwner(prev, actor, 'ProviderKey');
      if (actor.source !== 'kubernetes') await refuseIfReferenced(tx, [id]);
      await tx.query('DELETE FROM provider_keys WHERE provider = $1 AND id = $2', [provider, id]);
    });
    await this.deps.publish({ kind: 'provider', name: provider });
  }

  /**
   * Loads config.json providers and keys, idempotently: rows the file names are created or brought to the
   * file's content; rows created through the API or by the operator are left alone.
   */
  async applyConfigFile(file: ConfigFile): Promise<void> {
    const compatV1 = file.version === 1;
    for (const [name, pc] of Object.entries(file.providers)) {
      this.checkKnown(name);
      await this.deps.db.transaction(async (tx) => {
        await tx.query(
          `INSERT INTO providers (name, network_config, source) VALUES ($1, $2, 'config')
           ON CONFLICT (name) DO UPDATE SET network_config = EXCLUDED.network_config, updated_at = now()
           WHERE providers.source = 'config'`,
          [name, JSON.stringify(pc.network_config ?? {})],
        );
        const prov = await this.row(tx, name, true);
        for (const [i, key] of pc.keys.entries()) {
          const keyName = key.name ?? `${name}-key-${i + 1}`;
          const id = key.id ?? stableId(name, keyName);
          const problem = this.deps.catalog.checkKey(name, key, Boolean(prov.network_config.base_url));
          if (problem) throw new StateError('invalid', `providers.${name}.keys[${i}]: ${problem}`);
          const { columns, secrets } = splitKeyInput(key, { compatV1 });
          await tx.query(
            `DELETE FROM provider_keys WHERE provider = $1 AND name = $2 AND id <> $3 AND source = 'config'`,
            [name, keyName, id],
          );
          await this.writeKey(tx, 'upsert-config', name, id, keyName, columns, secrets, { source: 'config' });
        }
      });
      await this.deps.publish({ kind: 'provider', name });
    }
  }

  private async insertKey(tx: Queryable, provider: string, id: string, input: KeyInput, actor: Actor): Promise<void> {
    const { columns, secrets } = splitKeyInput(input);
    const name = input.name ?? `${provider}-${id.slice(0, 8)}`;
    const clash = await tx.query('SELECT id FROM provider_keys WHERE id = $1 OR (provider = $2 AND name = $3)', [
      id,
      provider,
      name,
    ]);
    if (clash.rowCount > 0)
      throw new StateError('conflict', `a key with id ${id} or name ${name} already exists`, 'id');
    await this.writeKey(tx, 'insert', provider, id, name, columns, secrets, actor);
  }

  private async writeKey(
    tx: Queryable,
    mode: 'insert' | 'update' | 'upsert-config',
    provider: string,
    id: string,
    name: string,
    c: ReturnType<typeof splitKeyInput>['columns'],
    secrets: KeySecrets,
    actor: Actor,
  ): Promise<void> {
    const params = [
      id,
      provider,
      name,
      this.deps.box.seal(JSON.stringify(secrets)),
      JSON.stringify(c.models),
      c.weight,
      JSON.stringify(c.aliases),
      json(c.azure_key_config),
      json(c.bedrock_key_config),
      json(c.vertex_key_config),
      json(c.replicate_key_config),
      actor.source,
      actor.source === 'kubernetes' ? actor.ownerRef : null,
    ];
    const cols = `(id, provider, name, secret, models, weight, aliases, azure_key_config, bedrock_key_config,
      vertex_key_config, replicate_key_config, source, owner_ref)`;
    const values = 'VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)';
    const set = `name = EXCLUDED.name, secret = EXCLUDED.secret, models = EXCLUDED.models, weight = EXCLUDED.weight,
      aliases = EXCLUDED.aliases, azure_key_config = EXCLUDED.azure_key_config,
      bedrock_key_config = EXCLUDED.bedrock_key_config, vertex_key_config = EXCLUDED.vertex_key_config,
      replicate_key_config = EXCLUDED.replicate_key_config, updated_at = now()`;
    if (mode === 'insert') {
      await tx.query(`INSERT INTO provider_keys ${cols} ${values}`, params);
    } else if (mode === 'update') {
      try {
        await tx.query(`INSERT INTO provider_keys ${cols} ${values} ON CONFLICT (id) DO UPDATE SET ${set}`, params);
      } catch (err) {
        if (isUniqueViolation(err)) throw new StateError('conflict', `a key named ${name} already exists`, 'name');
        throw err;
      }
    } else {
      await tx.query(
        `INSERT INTO provider_keys ${cols} ${values} ON CONFLICT (id) DO UPDATE SET ${set}
         WHERE provider_keys.source = 'config'`,
        params,
      );
    }
  }

  private checkKnown(name: string): void {
    if (!this.deps.catalog.has(name)) {
      throw new StateError(
        'invalid',
        `provider: unknown provider "${name}"; supported: ${this.deps.catalog.names().join(', ')}`,
        'provider',
      );
    }
  }

  private checkKey(provider: string, input: KeyInput, prov: ProviderRow): void {
    const problem = this.deps.catalog.checkKey(provider, input, Boolean(prov.network_config.base_url));
    // Problems start with the field they are about (`value: required ...`).
    if (problem) throw new StateError('invalid', problem, /^([\w.[\]]+):/.exec(problem)?.[1]);
  }

  private secrets(r: KeyRow): KeySecrets {
    return KeySecrets.parse(JSON.parse(this.deps.box.open(r.secret)));
  }

  private async row(q: Queryable, name: string, lock = false): Promise<ProviderRow> {
    checkPathParam(name, 'provider');
    const { rows } = await q.query<ProviderRow & Record<string, unknown>>(
      `SELECT * FROM providers WHERE name = $1${lock ? ' FOR UPDATE' : ''}`,
      [name],
    );
    const row = rows[0];
    if (!row) throw new StateError('not_found', `provider ${name} is not configured`, 'provider');
    return row;
  }

  private async keyRow(q: Queryable, provider: string, id: string, lock = false): Promise<KeyRow> {
    checkPathParam(id, 'key_id');
    const { rows } = await q.query<KeyRow & Record<string, unknown>>(
      `SELECT * FROM provider_keys WHERE provider = $1 AND id = $2${lock ? ' FOR UPDATE' : ''}`,
      [provider, id],
    );
    const row = rows[0];
    if (!row) throw new StateError('not_found', `key ${id} not found for provider ${provider}`, 'key_id');
    return row;
  }
}

/**
 * A key still listed in a virtual key's `key_ids` or scoping a pricing override is not deleted through the API
 * (409 naming them), as a team still used by keys is not. Kubernetes deletes proceed: the resources that
 * refer to it report ReferenceNotFound, and an id that matches no key is never selected.
 */
async function refuseIfReferenced(tx: Queryable, keyIds: string[]): Promise<void> {
  if (keyIds.length === 0) return;
  const ids = JSON.stringify(keyIds);
  const { rows: vks } = await tx.query<{ name: string }>(
    `SELECT DISTINCT vk.name FROM vk_provider_configs pc JOIN virtual_keys vk ON vk.id = pc.virtual_key_id
     WHERE pc.key_ids ?| ARRAY(SELECT jsonb_array_elements_text($1::jsonb)) ORDER BY vk.name`,
    [ids],
  );
  const { rows: overrides } = await tx.query<{ id: string }>(
    `SELECT id FROM pricing_overrides WHERE scope = 'provider_key'
     AND scope_id IN (SELECT jsonb_array_elements_text($1::jsonb)) ORDER BY id`,
    [ids],
  );
  const uses = [
    ...(vks.length > 0 ? [`virtual keys ${vks.map((v) => v.name).join(', ')} (key_ids)`] : []),
    ...(overrides.length > 0 ? [`pricing overrides ${overrides.map((o) => o.id).join(', ')}`] : []),
  ];
  if (uses.length > 0) {
    const what = keyIds.length === 1 ? `key ${keyIds[0]} is` : 'keys of this provider are';
    throw new StateError('conflict', `${what} still used by ${uses.join(' and ')}; remove it there first`);
  }
}

function parseProviderBody(body: unknown): ProviderInput {
  if (body && typeof body === 'object' && 'keys' in body) throw new StateError('invalid', KEYS_MOVED, 'keys');
  const r = ProviderInput.safeParse(body ?? {});
  if (!r.success) throw invalidInput(r.error);
  return r.data;
}

function parseKeyBody(body: unknown): KeyInput {
  const r = KeyInput.safeParse(body ?? {});
  if (!r.success) throw invalidInput(r.error);
  return r.data;
}

function checkOwner(row: { owner_ref: string | null }, actor: Actor, kind: string): void {
  if (row.owner_ref && actor.source !== 'kubernetes') {
    throw new StateError(
      'owned_by_kubernetes',
      `this resource is managed by Kubernetes (${kind}: ${row.owner_ref}); edit it with kubectl`,
    );
  }
}

function providerView(r: ProviderRow): Record<string, unknown> {
  return {
    name: r.name,
    network_config: r.network_config,
    source: r.source,
    ...(r.owner_ref ? { owner_ref: r.owner_ref } : {}),
    created_at: iso(r.created_at),
    updated_at: iso(r.updated_at),
  };
}

function json(v: unknown): string | null {
  return v === null || v === undefined ? null : JSON.stringify(v);
}

function isUniqueViolation(err: unknown): boolean {
  return err instanceof DbError && err.code === 'unique_violation';
}
