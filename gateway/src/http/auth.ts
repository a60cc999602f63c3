// Who is calling. Pure decisions over request headers and hashed credentials; lookups compare SHA-256
// digests (the secret itself is never compared byte by byte), Basic passwords with timingSafeEqual.
import { timingSafeEqual } from 'node:crypto';
import type { AuthConfig } from '../config/schema.ts';
import { isExpired } from '../governance/admission.ts';
import type { VirtualKey } from '../governance/model.ts';
import { sha256Hex } from '../state/ids.ts';
import { hasVirtualKeyPrefix } from '../state/services/governance/virtual-keys-value.ts';
import { GatewayError } from './errors.ts';

export type Principal =
  | { kind: 'admin'; name: string }
  | { kind: 'token'; name: string }
  | { kind: 'basic'; username: string }
  | { kind: 'virtual_key'; vk: VirtualKey }
  | { kind: 'anonymous' };

/** Finds a virtual key by the SHA-256 hex of its value (the snapshot's index). */
export type VirtualKeyLookup = (hash: string) => VirtualKey | undefined;

export interface AuthIndex {
  /** sha256 hex of admin keys from config.json and GATEWAY_ADMIN_API_KEY -> name. */
  adminKeys: Map<string, string>;
  /** sha256 hex of inference tokens -> name. */
  tokens: Map<string, string>;
  /** username -> sha256 digest of the password. */
  basicUsers: Map<string, Buffer>;
}

export function buildAuthIndex(auth: AuthConfig, envAdminKey: string | undefined): AuthIndex {
  const adminKeys = new Map(auth.admin_api_keys.map((k) => [sha256Hex(k.value), k.name]));
  if (envAdminKey) adminKeys.set(sha256Hex(envAdminKey), 'GATEWAY_ADMIN_API_KEY');
  return {
    adminKeys,
    tokens: new Map(auth.inference_tokens.map((t) => [sha256Hex(t.value), t.name])),
    basicUsers: new Map(auth.basic_users.map((u) => [u.username, Buffer.from(sha256Hex(u.password), 'hex')])),
  };
}

type Headers = Record<string, string | string[] | undefined>;

function header(h: Headers, name: string): string | undefined {
  const v = h[name];
  return Array.isArray(v) ? v[0] : v;
}

export function isVirtualKey(value: string): boolean {
  return hasVirtualKeyPrefix(value);
}

function adminFor(index: AuthIndex, storedHashes: ReadonlySet<string>, secret: string): Principal | undefined {
  const h = sha256Hex(secret);
  const name = index.adminKeys.get(h);
  if (name !== undefined) return { kind: 'admin', name };
  if (storedHashes.has(h)) return { kind: 'admin', name: 'stored' };
  return undefined;
}

/** /api/*: only `Authorization: Bearer <admin API key>`. */
export function authenticateAdmin(h: Headers, index: AuthIndex, storedHashes: ReadonlySet<string>): Principal {
  const authz = header(h, 'authorization');
  if (!authz || !/^bearer\s/i.test(authz)) {
    const other = header(h, 'x-api-key') ?? header(h, 'x-gateway-vk');
    throw new GatewayError(
      'authentication_failed',
      other
        ? 'management APIs accept only Authorization: Bearer <admin API key>; x-api-key and virtual keys are rejected'
        : 'missing Authorization: Bearer <admin API key>',
    );
  }
  const secret = authz.slice(7).trim();
  if (isVirtualKey(secret)) {
    throw new GatewayError('authentication_failed', 'virtual keys are not accepted on management APIs');
  }
  const p = adminFor(index, storedHashes, secret);
  if (!p) throw new GatewayError('authentication_failed', 'invalid admin API key');
  return p;
}

const RAW_PROVIDER_HEADERS = ['x-goog-api-key', 'x-gateway-azure-endpoint'];

/** A credential found where a wire format's SDK carries it (`x-goog-api-key`, `?key=`, Azure's `api-key`). */
export interface CarriedCredential {
  /** Where it came from, for messages (`x-goog-api-key`, `?key`). */
  where: string;
  value: string;
}

/**
 * Inference routes. A presented credential must be valid even when `enforce_auth_on_inference` is off
 * (that setting only lets requests without credentials through): raw provider keys always fail.
 * A virtual key may come as `x-gateway-vk`, `x-api-key`, `Authorization: Bearer` or the family's own carriers;
 * it is the principal. `x-api-key` and the carriers may also hold a gateway token (an SDK sends its key there).
 */
export function authenticateInference(
  h: Headers,
  index: AuthIndex,
  storedHashes: ReadonlySet<string>,
  enforce: boolean,
  lookupVk: VirtualKeyLookup,
  nowMs: number,
  carried: readonly CarriedCredential[] = [],
): Principal {
  for (const name of RAW_PROVIDER_HEADERS) {
    if (header(h, name) !== undefined && !carried.some((c) => c.where === name)) throw rawKeyError(name);
  }
  for (const name of Object.keys(h)) {
    if (name.startsWith('x-gateway-bedrock-')) throw rawKeyError(name);
  }
  let vkValue = header(h, 'x-gateway-vk');
  let viaAuthorization: Principal | undefined;
  const apiKey = header(h, 'x-api-key');
  const secrets = apiKey === undefined ? carried : [{ where: 'x-api-key', value: apiKey }, ...carried];
  for (const c of secrets) {
    if (isVirtualKey(c.value)) vkValue ??= c.value;
    else viaAuthorization ??= bearer(c.value, index, storedHashes, c.where);
  }
  const authz = header(h, 'authorization');
  if (authz) {
    if (/^bearer\s/i.test(authz)) {
      const secret = authz.slice(7).trim();
      if (isVirtualKey(secret)) vkValue ??= secret;
      else viaAuthorization ??= bearer(secret, index, storedHashes, 'Authorization');
    } else if (/^basic\s/i.test(authz)) {
      viaAuthorization ??= basic(authz.slice(6).trim(), index);
    } else if (/^aws4-hmac-sha256\s/i.test(authz)) {
      throw new GatewayError(
        'authentication_failed',
        'AWS SigV4-signed requests are not accepted: the gateway holds the provider credentials. Send a virtual key ' +
          'or gateway token as a bearer token (AWS_BEARER_TOKEN_BEDROCK, or the client’s token option)',
      );
    } else {
      throw new GatewayError('authentication_failed', 'unsupported Authorization scheme; use Bearer or Basic');
    }
  }
  if (vkValue !== undefined) return virtualKey(vkValue, lookupVk, nowMs);
  if (viaAuthorization) return viaAuthorization;
  if (enforce) {
    throw new GatewayError(
      'authentication_failed',
      'missing credentials: send Authorization: Bearer <gateway token or virtual key>, Basic credentials, or x-gateway-vk',
    );
  }
  return { kind: 'anonymous' };
}

function bearer(secret: string, index: AuthIndex, storedHashes: ReadonlySet<string>, where: string): Principal {
  const token = index.tokens.get(sha256Hex(secret));
  if (token !== undefined) return { kind: 'token', name: token };
  const admin = adminFor(index, storedHashes, secret);
  if (admin) return admin;
  throw rawKeyError(where);
}

/**
 * Resolves a virtual key value. Unknown, inactive or expired: 403, as the reference answers (issue 14); a credential
 * that is no virtual key at all stays an authentication error (401).
 */
export function virtualKey(value: string, lookupVk: VirtualKeyLookup, nowMs: number): Principal {
  if (!isVirtualKey(value)) throw unknownVirtualKey();
  const vk = lookupVk(sha256Hex(value));
  if (!vk) throw unknownVirtualKey();
  if (!vk.is_active) throw new GatewayError('permission_denied', `virtual key ${vk.name} is inactive`);
  if (isExpired(vk, nowMs)) throw new GatewayError('permission_denied', `virtual key ${vk.name} has expired`);
  return { kind: 'virtual_key', vk };
}

function basic(encoded: string, index: AuthIndex): Principal {
  const decoded = Buffer.from(encoded, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  const username = colon === -1 ? decoded : decoded.slice(0, colon);
  const password = colon === -1 ? '' : decoded.slice(colon + 1);
  if (!isBasicUser(index, username, password))
    throw new GatewayError('authentication_failed', 'invalid username or password');
  return { kind: 'basic', username };
}

/** A Basic user of config.json with this password (also the dashboard's login). */
export function isBasicUser(index: AuthIndex, username: string, password: string): boolean {
  const expected = index.basicUsers.get(username);
  const got = Buffer.from(sha256Hex(password), 'hex');
  // Compare even for unknown users so timing does not reveal which usernames exist.
  return timingSafeEqual(got, expected ?? Buffer.alloc(32)) && expected !== undefined;
}

/** The name of the admin API key `secret` (config, GATEWAY_ADMIN_API_KEY or the stored generated one). */
export function adminKeyName(index: AuthIndex, storedHashes: ReadonlySet<string>, secret: string): string | undefined {
  const p = adminFor(index, storedHashes, secret);
  return p?.kind === 'admin' ? p.name : undefined;
}

function rawKeyError(header: string): GatewayError {
  return new GatewayError(
    'authentication_failed',
    `${header}: not a gateway credential. Raw provider keys are not accepted or forwarded; use a gateway token or a virtual key`,
  );
}

function unknownVirtualKey(): GatewayError {
  return new GatewayError('permission_denied', 'unknown virtual key');
}
