// Row ids derived from a resource's namespace and name: stable across operator restarts and leader changes,
// so a reconcile interrupted anywhere finds its own rows again and never creates a second one.
import { stableId } from '@model-gateway/gateway/state';

export function providerKeyId(namespace: string, name: string): string {
  return stableId('kubernetes', namespace, 'ProviderKey', name);
}

export function virtualKeyId(namespace: string, name: string): string {
  return stableId('kubernetes', namespace, 'VirtualKey', name);
}

export function budgetId(namespace: string, name: string): string {
  return stableId('kubernetes', namespace, 'Budget', name);
}

/** Budgets written inline in a VirtualKey: by place (the key, or one provider config) and position. */
export function inlineBudgetId(namespace: string, virtualKey: string, place: string, index: number): string {
  return stableId('kubernetes', namespace, 'VirtualKey', virtualKey, place, String(index));
}

export function mcpClientId(namespace: string, name: string): string {
  return stableId('kubernetes', namespace, 'MCPClient', name);
}
