// A virtual key's provider configs (rules 2, 3, 6 and 7): none means every carried provider; `allowed_models: []`
// means all; the allowed keys come across as key_ids as they were; a config's budget refers to the config.

import { stableId } from '../../ids.ts';
import { num, type Raw } from '../store14.ts';
import type { Limits } from './limits.ts';
import type { Notes } from './notes.ts';
import type { PlannedProviderConfig } from './types.ts';
import { stringList, tidyList, WILDCARD } from './values.ts';

export interface ProviderConfigsEarlier {
  carriedProviders: string[];
  /** 1.4.x provider config row id → the 1.4.x key rows it allows. */
  keyRows: Map<string, number[]>;
  keyIdByRow: Map<number, string>;
  keyNameById: Map<string, string>;
}

/** The allowed-keys join table, grouped by provider config. */
export function keyRowsByConfig(rows: Raw[]): Map<string, number[]> {
  const keyRows = new Map<string, number[]>();
  for (const r of rows) {
    const pc = String(num(r['table_virtual_key_provider_config_id']));
    keyRows.set(pc, [...(keyRows.get(pc) ?? []), num(r['table_key_id']) ?? -1]);
  }
  return keyRows;
}

/**
 * The configs of virtual key `vkId` from its 1.4.x rows `pcs`, and the calendar_aligned of each budget they took
 * (the key decides between them).
 */
export function planVkProviderConfigs(
  vkId: string,
  object: string,
  pcs: Raw[],
  earlier: ProviderConfigsEarlier,
  limits: Limits,
  notes: Notes,
): { configs: PlannedProviderConfig[]; budgetsAligned: boolean[] } {
  const { carriedProviders, keyRows, keyIdByRow, keyNameById } = earlier;
  const configs: PlannedProviderConfig[] = [];
  const budgetsAligned: boolean[] = [];
  if (pcs.length === 0) {
    for (const provider of carriedProviders) {
      configs.push({
        id: stableId('upgrade-14-provider-config', vkId, provider),
        provider,
        allowedModels: [WILDCARD],
        keyIds: [WILDCARD],
        weight: null,
        rateLimit: null,
        position: configs.length,
      });
    }
    notes.note(
      object,
      `no provider_configs → every configured provider (${carriedProviders.join(', ')}) with allowed_models ["*"], key_ids ["*"], weight null`,
      3,
    );
  }
  for (const pc of pcs) {
    const provider = String(pc['provider']);
    const pcObject = `${object} → ${provider}`;
    if (!carriedProviders.includes(provider)) {
      notes.warn(pcObject, `provider ${provider} is not carried over: this provider config is left out`);
      continue;
    }
    if (configs.some((c) => c.provider === provider)) {
      notes.fail(pcObject, 'a second provider config for the same provider (one per provider here)');
      continue;
    }
    const models = stringList(pc['allowed_models']);
    if (models === undefined) {
      notes.fail(pcObject, 'allowed_models is not a list of names');
      continue;
    }
    const pcId = stableId('upgrade-14-provider-config', vkId, provider);
    const keyIds = (keyRows.get(String(num(pc['id']))) ?? [])
      .map((row) => keyIdByRow.get(row))
      .filter((k): k is string => k !== undefined);
    configs.push({
      id: pcId,
      provider,
      allowedModels: models.length === 0 ? [WILDCARD] : tidyList(models),
      keyIds,
      weight: num(pc['weight']),
      rateLimit: limits.rateLimitOf(pc, pcObject),
      position: configs.length,
    });
    if (models.length === 0) notes.note(pcObject, 'allowed_models [] → ["*"]', 2);
    if (keyIds.length > 0) {
      notes.note(
        pcObject,
        `key_ids ${JSON.stringify(keyIds.map((k) => keyNameById.get(k)))} carried over as they were`,
        7,
      );
    } else {
      notes.warn(
        pcObject,
        'no allowed keys in 1.4.x (all keys): key_ids stays [] and now blocks every key until key_ids is set (rule 7, no automatic migration)',
      );
    }
    const b = limits.takeBudget(pc, 'provider_config_id', pcId, pcObject);
    if (b) {
      budgetsAligned.push(b.calendarAligned);
      notes.note(pcObject, `budget → budgets [${b.id}] referring to the provider config`, 6);
    }
  }
  return { configs, budgetsAligned };
}
