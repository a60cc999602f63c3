// In-memory caches for the pure reconciler functions (plain data, as the informers hold it).

import type { Caches, Lookup, Resource, SecretObject } from '../../src/reconcilers/types.ts';
import { nextStatus } from '../../src/status.ts';

export const NS = 'team-a';

function lookup<T extends { metadata: { name: string } }>(items: T[]): Lookup<T> {
  return { get: (name) => items.find((i) => i.metadata.name === name), list: () => items };
}

type Parts = Partial<Record<Exclude<keyof Caches, 'secrets'>, Resource[]>> & { secrets?: SecretObject[] };

export function caches(parts: Parts): Caches {
  return {
    providers: lookup(parts.providers ?? []),
    providerKeys: lookup(parts.providerKeys ?? []),
    virtualKeys: lookup(parts.virtualKeys ?? []),
    budgets: lookup(parts.budgets ?? []),
    mcpClients: lookup(parts.mcpClients ?? []),
    secrets: lookup(parts.secrets ?? []),
  };
}

export function resource(
  name: string,
  spec: unknown,
  opts: { ready?: boolean; status?: Record<string, unknown> } = {},
): Resource {
  const status = opts.ready
    ? { ...nextStatus(undefined, 1, { ready: true }, new Date(0)), ...opts.status }
    : opts.status;
  return { metadata: { name, namespace: NS, uid: `uid-${name}`, generation: 1 }, spec, ...(status ? { status } : {}) };
}

export function secret(name: string, data: Record<string, string>, ownerUid?: string): SecretObject {
  return {
    metadata: {
      name,
      namespace: NS,
      ...(ownerUid ? { ownerReferences: [{ apiVersion: 'v1', kind: 'VirtualKey', name: 'x', uid: ownerUid }] } : {}),
    },
    data: Object.fromEntries(Object.entries(data).map(([k, v]) => [k, Buffer.from(v).toString('base64')])),
  };
}
