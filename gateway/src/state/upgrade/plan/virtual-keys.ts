// Virtual keys (rules 2, 3, 4, 6 and 7): the value is kept (its digest, so it authenticates as before), the key's
// budget refers to the key, calendar_aligned moves from the budgets to the key, and the provider and MCP configs
// are planned by their own steps.

import { sha256Hex } from '../../ids.ts';
import { valueHint } from '../../services/governance/virtual-keys-value.ts';
import { bool, type Raw, type Store14, str, text, time } from '../store14.ts';
import type { Limits } from './limits.ts';
import type { Notes } from './notes.ts';
import type { PlannedVirtualKey } from './types.ts';
import { sourceOf } from './values.ts';
import { type McpConfigsEarlier, planVkMcpConfigs } from './vk-mcp-configs.ts';
import { keyRowsByConfig, type ProviderConfigsEarlier, planVkProviderConfigs } from './vk-provider-configs.ts';

/** The 1.4.x virtual-key prefix (this gateway's legacy prefix). */
const PREFIX_14 = 'sk-bf-';

export type VirtualKeysEarlier = Omit<ProviderConfigsEarlier, 'keyRows'> & McpConfigsEarlier;

type VirtualKeyRows = Pick<Store14, 'virtualKeys' | 'providerConfigs' | 'providerConfigKeys' | 'vkMcpConfigs'>;

export function planVirtualKeys(
  store: VirtualKeyRows,
  earlier: VirtualKeysEarlier,
  limits: Limits,
  notes: Notes,
): PlannedVirtualKey[] {
  const out: PlannedVirtualKey[] = [];
  const pcEarlier: ProviderConfigsEarlier = { ...earlier, keyRows: keyRowsByConfig(store.providerConfigKeys) };
  for (const vk of store.virtualKeys) {
    const id = String(vk['id']);
    const object = `virtual key ${String(vk['name'])}`;
    const planned = planKey(vk, object, limits, notes);
    if (!planned) continue;
    const aligned: boolean[] = [];
    const own = limits.takeBudget(vk, 'virtual_key_id', id, object);
    if (own) {
      aligned.push(own.calendarAligned);
      notes.note(object, `budget → budgets [${own.id}] referring to the key`, 6);
    }
    const pcs = store.providerConfigs.filter((pc) => String(pc['virtual_key_id']) === id);
    const { configs, budgetsAligned } = planVkProviderConfigs(id, object, pcs, pcEarlier, limits, notes);
    planned.configs = configs;
    aligned.push(...budgetsAligned);
    planned.calendarAligned = own ? own.calendarAligned : aligned.some(Boolean);
    if (new Set(aligned).size > 1) {
      notes.warn(
        object,
        `its budgets disagreed on calendar_aligned; the key is now ${planned.calendarAligned} for all of them`,
      );
    }
    if (planned.calendarAligned) notes.note(object, 'calendar_aligned moved to the key: true', 6);
    const mcp = store.vkMcpConfigs.filter((m) => String(m['virtual_key_id']) === id);
    planned.mcpConfigs = planVkMcpConfigs(object, mcp, earlier, notes);
    if (!planned.isActive) notes.note(object, 'inactive: stays inactive');
    out.push(planned);
    notes.note(object, `value kept: authenticates as before (${PREFIX_14} is accepted as the legacy prefix)`);
  }
  return out;
}

/** The key itself, before its budgets and configs; undefined (with an error) when its value cannot be kept. */
function planKey(vk: Raw, object: string, limits: Limits, notes: Notes): PlannedVirtualKey | undefined {
  const value = str(vk['value']) ?? '';
  const plain = str(vk['encryption_status']) === 'plain_text' && value !== '';
  const hash = plain ? sha256Hex(value) : text(vk['value_hash']);
  if (hash === null) {
    notes.fail(object, 'its value is encrypted and the 1.4.x store holds no digest of it');
    return undefined;
  }
  const teamId = text(vk['team_id']);
  const customerId = text(vk['customer_id']);
  if (teamId && customerId) {
    notes.warn(object, 'belonged to a team and a customer: keeps the team (a key has one owner here)');
  }
  return {
    id: String(vk['id']),
    name: String(vk['name']),
    description: str(vk['description']) ?? '',
    valueHash: hash,
    valueHint: plain ? valueHint(value) : `${PREFIX_14}…`,
    isActive: bool(vk['is_active'], true),
    calendarAligned: false,
    rateLimit: limits.rateLimitOf(vk, object),
    mcpConfigs: [],
    teamId,
    customerId: teamId ? null : customerId,
    source: sourceOf(vk),
    configs: [],
    createdAt: time(vk['created_at']),
  };
}
