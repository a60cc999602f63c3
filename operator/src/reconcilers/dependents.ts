// Which resources to reconcile again when one changes (pure, over the caches): a Provider's keys, a key's
// VirtualKeys, a VirtualKey's Budgets, a Budget's VirtualKey, an MCPClient's VirtualKeys, and every user of a
// changed Secret.
import { BudgetSpecCR } from '../crds/budget.ts';
import { ProviderKeySpec } from '../crds/provider-key.ts';
import { VirtualKeySpec } from '../crds/virtual-key.ts';
import { mcpClientNameOfResource } from './mcp-client.ts';
import { referencedSecrets } from './secrets.ts';
import type { Caches, Resource } from './types.ts';
import { generatedSecretName } from './virtual-key.ts';

export type KindName = 'Provider' | 'ProviderKey' | 'VirtualKey' | 'MCPClient' | 'Budget';

export interface Dependent {
  kind: KindName;
  obj: Resource;
}

export function dependents(kind: KindName | 'Secret', obj: Resource, caches: Caches): Dependent[] {
  const name = obj.metadata.name;
  switch (kind) {
    case 'Provider':
      return caches.providerKeys
        .list()
        .filter((k) => ProviderKeySpec.safeParse(k.spec).data?.providerRef.name === name)
        .map((k) => ({ kind: 'ProviderKey', obj: k }));
    case 'ProviderKey':
      return caches.virtualKeys
        .list()
        .filter((vk) =>
          VirtualKeySpec.safeParse(vk.spec).data?.providerConfigs?.some((pc) => pc.providerKeyRefs?.includes(name)),
        )
        .map((vk) => ({ kind: 'VirtualKey', obj: vk }));
    case 'VirtualKey':
      return caches.budgets
        .list()
        .filter((b) => BudgetSpecCR.safeParse(b.spec).data?.virtualKeyRef.name === name)
        .map((b) => ({ kind: 'Budget', obj: b }));
    case 'Budget': {
      const vkName = BudgetSpecCR.safeParse(obj.spec).data?.virtualKeyRef.name;
      const vk = vkName ? caches.virtualKeys.get(vkName) : undefined;
      return vk ? [{ kind: 'VirtualKey', obj: vk }] : [];
    }
    case 'MCPClient': {
      // VirtualKeys name a client by its gateway name; one naming a client that did not exist yet is refused
      // by the gateway and waits for this event.
      const clientName = mcpClientNameOfResource(obj);
      if (!clientName) return [];
      return caches.virtualKeys
        .list()
        .filter((vk) => VirtualKeySpec.safeParse(vk.spec).data?.mcpConfigs?.some((m) => m.mcpClientName === clientName))
        .map((vk) => ({ kind: 'VirtualKey', obj: vk }));
    }
    case 'Secret': {
      const users = (list: Resource[], k: KindName): Dependent[] =>
        list.filter((o) => referencedSecrets(o.spec).has(name)).map((o) => ({ kind: k, obj: o }));
      return [
        ...users(caches.providerKeys.list(), 'ProviderKey'),
        ...users(caches.virtualKeys.list(), 'VirtualKey'),
        ...users(caches.mcpClients.list(), 'MCPClient'),
        ...caches.virtualKeys
          .list()
          .filter((vk) => generatedSecretName(vk.metadata.name) === name)
          .map((vk): Dependent => ({ kind: 'VirtualKey', obj: vk })),
      ];
    }
  }
}
