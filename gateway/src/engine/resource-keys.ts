// Which of a provider's keys a model-less call is sent with. A resource lives in the provider account of the key
// that created it, so that key is remembered (Redis, best effort) and tried first for later calls on it.
import { WILDCARD } from '../config/allow-list.ts';
import type { ProviderConfig } from '../governance/model.ts';
import { GatewayError } from '../http/errors.ts';
import type { ProviderKey } from '../providers/types.ts';
import type { Runtime } from '../runtime.ts';
import type { ProviderEntry } from '../state/snapshot.ts';
import type { Pin } from './execute.ts';
import { pickWeighted } from './keys.ts';
import type { ResourceRef } from './resource-ref.ts';

/** How long the key that created a resource is remembered (OpenAI keeps batch files 30 days; ids outlive it). */
const REMEMBER_MS = 90 * 24 * 3600 * 1000;

function rememberKey(provider: string, ref: ResourceRef): string {
  return `resource-key:${provider}:${ref.kind}:${ref.id}`;
}

/**
 * The keys to try, in order: a pinned key alone; else the key that created the target resource first, then
 * the rest (a resource not found under one key may live under another); else one key by weight. A key with an
 * empty `models` list serves nothing (deny by default), here too.
 */
export async function orderKeys(
  rt: Runtime,
  entry: ProviderEntry,
  pc: ProviderConfig | undefined,
  pin: Pin | undefined,
  provider: string,
  target: ResourceRef | undefined,
  /** The key the target's owner record names. */
  recordedKeyId?: string | undefined,
): Promise<ProviderKey[]> {
  const allowedIds = pc && pc.key_ids[0] !== WILDCARD ? pc.key_ids : undefined;
  if (pin) {
    const k = pin.by === 'id' ? entry.keysById.get(pin.value) : entry.keysByName.get(pin.value);
    if (!k) {
      throw new GatewayError(
        'key_not_found',
        `pinned key ${pin.by} "${pin.value}" is not a key of provider ${provider}`,
        {
          param: pin.by === 'id' ? 'x-gateway-key-id' : 'x-gateway-key-name',
        },
      );
    }
    if (allowedIds && !allowedIds.includes(k.id)) {
      throw new GatewayError(
        'permission_denied',
        `pinned key ${k.name} is not in the virtual key's key_ids (rule: key_ids)`,
      );
    }
    return [k];
  }
  if (entry.keys.length === 0) {
    throw new GatewayError(
      'no_keys_available',
      `provider ${provider} has no keys; add one with POST /api/providers/${provider}/keys`,
    );
  }
  const pool = entry.keys.filter((k) => k.models.length > 0 && (!allowedIds || allowedIds.includes(k.id)));
  if (pool.length === 0) {
    throw new GatewayError(
      'permission_denied',
      `no key of provider ${provider} may be used here (rule: ${allowedIds ? 'key_ids' : 'provider key models is empty (deny all)'})`,
    );
  }
  if (!target) return [pickWeighted(pool, rt.random)!];
  // Best effort like session stickiness: while Redis is down, every allowed key is tried in turn.
  const knownId = (await rememberedResourceKey(rt, provider, target)) ?? recordedKeyId;
  const known = pool.find((k) => k.id === knownId);
  if (known) return [known, ...pool.filter((k) => k !== known)];
  const first = pickWeighted(pool, rt.random)!;
  return [first, ...pool.filter((k) => k !== first)];
}

/**
 * Records that the key `keyId` created `ref` at `provider` (by runResourceCall, or the inference core for a
 * video): later model-less calls on it go to that key first. Best effort.
 */
export async function rememberResourceKey(
  rt: Runtime,
  provider: string,
  ref: ResourceRef,
  keyId: string,
): Promise<void> {
  await rt.state.coord.set(rememberKey(provider, ref), keyId, REMEMBER_MS).catch(() => undefined);
}

/** The id of the key remembered as the creator of `ref`; undefined when unknown (or while Redis is down). */
export async function rememberedResourceKey(
  rt: Runtime,
  provider: string,
  ref: ResourceRef,
): Promise<string | undefined> {
  return (await rt.state.coord.get(rememberKey(provider, ref)).catch(() => null)) ?? undefined;
}
