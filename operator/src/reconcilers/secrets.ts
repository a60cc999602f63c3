// Reading values out of cached Secrets (pure). Messages name the Secret and key, never the value.
import type { SecretKeyRef } from '../crds/common.ts';
import type { Lookup, SecretObject } from './types.ts';

export type SecretRead = { ok: true; value: string } | { ok: false; message: string };

export function readSecretKey(secrets: Lookup<SecretObject>, ref: SecretKeyRef): SecretRead {
  const secret = secrets.get(ref.name);
  if (!secret) return { ok: false, message: `Secret ${ref.name} not found` };
  const encoded = secret.data?.[ref.key];
  if (encoded === undefined) return { ok: false, message: `Secret ${ref.name} has no key ${ref.key}` };
  return { ok: true, value: Buffer.from(encoded, 'base64').toString('utf8') };
}

/** Reads every ref; the first missing one is reported. */
export function readSecretKeys<K extends string>(
  secrets: Lookup<SecretObject>,
  refs: Partial<Record<K, SecretKeyRef>>,
): { ok: true; values: Partial<Record<K, string>> } | { ok: false; message: string } {
  const values: Partial<Record<K, string>> = {};
  for (const [field, ref] of Object.entries(refs) as [K, SecretKeyRef | undefined][]) {
    // Object.entries loses the key type; the keys are exactly those of `refs`.
    if (!ref) continue;
    const read = readSecretKey(secrets, ref);
    if (!read.ok) return read;
    values[field] = read.value;
  }
  return { ok: true, values };
}

/** Names of the Secrets a spec refers to (any `secretKeyRef`-shaped object or `secretRef`), for re-reconciles. */
export function referencedSecrets(spec: unknown): Set<string> {
  const names = new Set<string>();
  const visit = (node: unknown, key: string): void => {
    if (Array.isArray(node)) {
      for (const item of node) visit(item, key);
      return;
    }
    if (!node || typeof node !== 'object') return;
    const record = node as Record<string, unknown>; // a plain JSON object from the API server
    if (/SecretRef$|^secretKeyRef$|^secretRef$/.test(key) && typeof record.name === 'string') names.add(record.name);
    for (const [k, v] of Object.entries(record)) visit(v, k);
  };
  visit(spec, '');
  return names;
}
