// Routing rules come across with their targets; a target pinned to one key loses the pin (none per target here).

import { formatIssues } from '../../../config/issues.ts';
import { RoutingRuleInput } from '../../services/governance/routing-rules.ts';
import { bool, json, num, type Raw, str, text } from '../store14.ts';
import type { Notes } from './notes.ts';
import type { PlannedRoutingRule } from './types.ts';
import { stringList } from './values.ts';

export function planRoutingRules(
  rules: Raw[],
  targetRows: Raw[],
  keyNameById: Map<string, string>,
  notes: Notes,
): PlannedRoutingRule[] {
  const out: PlannedRoutingRule[] = [];
  for (const r of rules) {
    const id = String(r['id']);
    const object = `routing rule ${r['name']}`;
    const targets = targetRows.filter((t) => String(t['rule_id']) === id);
    for (const t of targets) {
      const pin = text(t['key_id']);
      if (pin) {
        notes.warn(
          object,
          `its ${t['provider']} target was pinned to key ${keyNameById.get(pin) ?? pin}: pins per target are not supported here, so the target uses the key selection of the caller's virtual key`,
        );
      }
    }
    const query = json(r['query']);
    const parsed = RoutingRuleInput.safeParse({
      name: String(r['name']),
      description: str(r['description']) ?? '',
      enabled: bool(r['enabled'], true),
      cel_expression: String(r['cel_expression'] ?? ''),
      targets: targets.map((t) => ({
        ...(text(t['provider']) ? { provider: text(t['provider']) } : {}),
        ...(text(t['model']) ? { model: text(t['model']) } : {}),
        weight: num(t['weight']) ?? 1,
      })),
      fallbacks: stringList(r['fallbacks']) ?? [],
      scope: String(r['scope'] ?? 'global'),
      ...(text(r['scope_id']) ? { scope_id: text(r['scope_id']) } : {}),
      priority: num(r['priority']) ?? 0,
      query: query && typeof query === 'object' && !Array.isArray(query) ? query : null,
    });
    if (!parsed.success) {
      notes.fail(object, formatIssues(parsed.error));
      continue;
    }
    out.push({ ...parsed.data, id });
    notes.note(object, 'carried over');
  }
  return out;
}
