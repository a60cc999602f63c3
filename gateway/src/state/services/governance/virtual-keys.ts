// Virtual keys: validate -> write in one transaction -> publish {kind: 'governance', virtual_key_ids: [id]}. The
// one write path for the REST API and the operator. The value is shown once, on create; only its SHA-256 and a hint are stored.
import type { Budget } from '../../../governance/model.ts';
import type { Db } from '../../db/types.ts';
import { StateError } from '../../errors.ts';
import type { ChangeEvent } from '../../events.ts';
import { newId, stableId } from '../../ids.ts';
import type { Actor, ProviderCatalog } from '../catalog.ts';
import { checkPathParam } from '../input.ts';
import { checkUnchanged, type UpdateOptions } from '../partial.ts';
import { type BudgetUsageFn, budgetDetail, budgetSummary } from './budgets.ts';
import { type VirtualKeyInput, validateVirtualKey } from './validate.ts';
import {
  allBudgets,
  readVirtualKeyRows,
  toVirtualKeys,
  type VirtualKeyRow,
  virtualKeyView,
} from './virtual-keys-rows.ts';
import { generateValue, isValueShaped, VALUE_RULE, valueHash, valueHint } from './virtual-keys-value.ts';
import {
  checkReferences,
  NO_CHILDREN,
  readExistingChildren,
  writeChildren,
  writeKeyRow,
  writeValue,
} from './virtual-keys-write.ts';

export interface VirtualKeyServiceDeps {
  db: Db;
  catalog: ProviderCatalog;
  publish: (event: ChangeEvent) => Promise<void>;
  usage: BudgetUsageFn;
}

/** Only this key changed: pods reload just its rows (a burst of key writes costs no full reloads). */
const keyChanged = (id: string): ChangeEvent => ({ kind: 'governance', virtual_key_ids: [id] });
const CONFIG: Actor = { source: 'config' };

export class VirtualKeyService {
  private readonly deps: VirtualKeyServiceDeps;
  constructor(deps: VirtualKeyServiceDeps) {
    this.deps = deps;
  }

  /** Every key without its value, with budgets (limits, no usage) on the key and on each provider config. */
  async list(): Promise<Record<string, unknown>[]> {
    const entries = toVirtualKeys(await readVirtualKeyRows(this.deps.db));
    return entries.map(({ row, key }) => virtualKeyView(row, key, budgetSummary));
  }

  /** One key with full budget details: limits, current usage, last and next reset. */
  async get(id: string): Promise<Record<string, unknown>> {
    checkPathParam(id, 'id');
    const [entry] = toVirtualKeys(await readVirtualKeyRows(this.deps.db, id));
    if (!entry) throw notFound(id);
    const { row, key } = entry;
    const budgets = allBudgets(key);
    const usage = budgets.length > 0 ? await this.deps.usage(budgets) : new Map();
    return virtualKeyView(row, key, (b: Budget) => budgetDetail(b, usage.get(b.id)));
  }

  /** Creates a key; the response carries the full `value`, the only time it is shown. */
  async create(body: unknown, actor: Actor): Promise<Record<string, unknown>> {
    const { id, value } = await this.insert(body, actor);
    return { ...(await this.get(id)), value };
  }

  /**
   * Creates a key without reading it back (the operator's write path, where a bulk apply counts round trips);
   * `appliedHash` is stored with the row of a Kubernetes-owned key (OwnedResources' content digest).
   */
  async insert(body: unknown, actor: Actor, appliedHash?: string): Promise<{ id: string; value: string }> {
    const input = this.parse(body, 'create');
    const id = input.id ?? (actor.source === 'config' ? stableId('virtual_key', input.name) : newId());
    const value = input.value ?? generateValue();
    await this.deps.db.transaction(async (tx) => {
      await checkReferences(tx, input);
      await writeKeyRow(tx, id, input, actor, { hash: valueHash(value), hint: valueHint(value) }, appliedHash);
      await writeChildren(tx, id, input, NO_CHILDREN, actor);
    });
    await this.deps.publish(keyChanged(id));
    return { id, value };
  }

  /** Replaces the editable fields, provider configs and budgets; the value cannot change. */
  async update(id: string, body: unknown, actor: Actor, opts?: UpdateOptions): Promise<Record<string, unknown>> {
    await this.replace(id, body, actor, opts);
    return this.get(id);
  }

  /** update() without reading the key back (the operator's write path). */
  async replace(id: string, body: unknown, actor: Actor, opts?: UpdateOptions): Promise<void> {
    checkPathParam(id, 'id');
    const input = this.parse(body, 'update');
    if (input.id !== undefined && input.id !== id) {
      throw new StateError('invalid', `id: the body names virtual key ${input.id} but the path names ${id}`, 'id');
    }
    await this.deps.db.transaction(async (tx) => {
      const { keys } = await readVirtualKeyRows(tx, id, true);
      const row = keys[0];
      if (!row) throw notFound(id);
      checkUnchanged(row.updated_at, opts);
      checkOwner(row, actor);
      await checkReferences(tx, input);
      const existing = await readExistingChildren(tx, id);
      await writeKeyRow(tx, id, input, actor);
      await writeChildren(tx, id, input, existing, actor);
    });
    await this.deps.publish(keyChanged(id));
  }

  /** Replaces the value (a rotated Secret behind a VirtualKey resource); only the owner of the row may. */
  async setValue(id: string, value: string, actor: Actor): Promise<void> {
    checkPathParam(id, 'id');
    if (!isValueShaped(value)) throw new StateError('invalid', `value: ${VALUE_RULE}`, 'value');
    await this.deps.db.transaction(async (tx) => {
      const { keys } = await readVirtualKeyRows(tx, id, true);
      const row = keys[0];
      if (!row) throw notFound(id);
      checkOwner(row, actor);
      await writeValue(tx, id, row.name, { hash: valueHash(value), hint: valueHint(value) });
    });
    await this.deps.publish(keyChanged(id));
  }

  /** Deletes the key with its provider configs, budgets and their charges. */
  async delete(id: string, actor: Actor): Promise<void> {
    checkPathParam(id, 'id');
    await this.deps.db.transaction(async (tx) => {
      const { rows } = await tx.query<VirtualKeyRow & Record<string, unknown>>(
        'SELECT * FROM virtual_keys WHERE id = $1 FOR UPDATE',
        [id],
      );
      const row = rows[0];
      if (!row) throw notFound(id);
      checkOwner(row, actor);
      await tx.query('DELETE FROM virtual_keys WHERE id = $1', [id]);
    });
    await this.deps.publish(keyChanged(id));
  }

  /**
   * config.json at start: creates the named key or brings it to the file's content (value included); keys
   * created through the API or by the operator are left alone. The id and the ids of budgets listed without
   * one derive from the key's name (and the budget's place), so budgets keep their usage across restarts.
   * Returns the key's id.
   */
  async applyConfig(body: unknown): Promise<string> {
    const parsed = this.parse(body, 'create');
    if (parsed.value === undefined) throw new StateError('invalid', 'value: required in config.json', 'value');
    const { name } = parsed;
    const input: VirtualKeyInput = {
      ...parsed,
      budgets: parsed.budgets.map((b, i) => ({
        ...b,
        id: b.id ?? stableId('virtual_key', name, 'budgets', String(i)),
      })),
      provider_configs: parsed.provider_configs.map((pc) => ({
        ...pc,
        budgets: pc.budgets.map((b, i) => ({
          ...b,
          id: b.id ?? stableId('virtual_key', name, pc.provider, String(i)),
        })),
      })),
    };
    const value = { hash: valueHash(parsed.value), hint: valueHint(parsed.value) };
    const wanted = input.id ?? stableId('virtual_key', name);
    // By name; else the file's own row under its stable id (renamed through the API since the last start).
    const { rows } = await this.deps.db.query<{ id: string; source: string }>(
      `SELECT id, source FROM virtual_keys WHERE name = $1 OR (id = $2 AND source = 'config')
       ORDER BY (name = $1) DESC LIMIT 1`,
      [name, wanted],
    );
    const row = rows[0];
    if (row && row.source !== 'config') return row.id;
    const id = row?.id ?? wanted;
    await this.deps.db.transaction(async (tx) => {
      await checkReferences(tx, input);
      if (!row) {
        await writeKeyRow(tx, id, input, CONFIG, value);
        await writeChildren(tx, id, input, NO_CHILDREN, CONFIG);
        return;
      }
      await readVirtualKeyRows(tx, id, true);
      const existing = await readExistingChildren(tx, id);
      await writeKeyRow(tx, id, input, CONFIG);
      await writeValue(tx, id, name, value);
      await writeChildren(tx, id, input, existing, CONFIG);
    });
    await this.deps.publish(keyChanged(id));
    return id;
  }

  private parse(body: unknown, mode: 'create' | 'update'): VirtualKeyInput {
    const v = validateVirtualKey(body ?? {}, mode);
    if (!v.ok) throw new StateError('invalid', v.error.message, v.error.param);
    for (const [i, pc] of v.value.provider_configs.entries()) {
      if (!this.deps.catalog.has(pc.provider)) {
        const param = `provider_configs[${i}].provider`;
        const known = this.deps.catalog.names().join(', ');
        throw new StateError('invalid', `${param}: unknown provider "${pc.provider}"; supported: ${known}`, param);
      }
    }
    return v.value;
  }
}

function checkOwner(row: VirtualKeyRow, actor: Actor): void {
  if (row.owner_ref && actor.source !== 'kubernetes') {
    throw new StateError(
      'owned_by_kubernetes',
      `this resource is managed by Kubernetes (VirtualKey: ${row.owner_ref}); edit it with kubectl`,
    );
  }
}

function notFound(id: string): StateError {
  return new StateError('not_found', `virtual key ${id} not found`, 'id');
}
