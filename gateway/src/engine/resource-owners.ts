// Tenant isolation of provider-held resources (files, batches, videos, containers, stored responses and their
// items). Resources live in the provider account behind the gateway's keys, so the gateway records who created
// each one and holds virtual keys to their own: another tenant's resource answers 404 (its existence is not
// confirmed), and lists show only the caller's. Gateway tokens, admins and unauthenticated callers (auth not
// enforced) reach everything.
import type { Principal } from '../http/auth.ts';
import { GatewayError } from '../http/errors.ts';
import type { Runtime } from '../runtime.ts';
import type { Db } from '../state/db/types.ts';
import { type ResourceOwner, ResourceOwnerStore } from '../state/services/resource-owners.ts';
import { messageOf } from '../util/errors.ts';
import type { ResourceRef } from './resource-ref.ts';

/** The owner of what gateway tokens, admins and unauthenticated callers create. */
export const GATEWAY_OWNER = 'gateway';

/** Provider pages a filtered list reads at most per call. */
export const MAX_LIST_PAGES = 10;

const stores = new WeakMap<Db, ResourceOwnerStore>();

function store(rt: Runtime): ResourceOwnerStore {
  let s = stores.get(rt.state.db);
  if (!s) {
    s = new ResourceOwnerStore(rt.state.db);
    stores.set(rt.state.db, s);
  }
  return s;
}

/** Who a caller's resources belong to, and the virtual key held to them (undefined: the caller sees all). */
export function callerOwner(principal: Principal | null): { owner: string; vkId: string | undefined } {
  if (principal?.kind === 'virtual_key') return { owner: vkOwner(principal.vk.id), vkId: principal.vk.id };
  return { owner: GATEWAY_OWNER, vkId: undefined };
}

/** The owner a virtual key's resources are recorded under. */
export function vkOwner(vkId: string): string {
  return `vk:${vkId}`;
}

/** The id as recorded: without a `<kind>s/` collection prefix, so Gemini's `files/abc` and `abc` are one file. */
export function recordedId(ref: ResourceRef): string {
  const prefix = `${ref.kind}s/`;
  return ref.id.startsWith(prefix) && ref.id.length > prefix.length ? ref.id.slice(prefix.length) : ref.id;
}

/** The 404 of a resource a virtual key cannot prove it owns (its existence is not confirmed). */
export function notFound(ref: ResourceRef): GatewayError {
  return new GatewayError('not_found', `${ref.kind.replaceAll('_', ' ')} ${ref.id.slice(0, 200)} not found`);
}

/**
 * The owner record of a resource a call addresses. A virtual key that cannot prove it owns the resource (another
 * tenant's, made outside the gateway, or the record is lost) gets 404 before anything is sent; so does one
 * whose check cannot be made (Postgres down: 503, fail closed). Others get the record when there is one.
 */
export async function checkOwner(
  rt: Runtime,
  principal: Principal | null,
  provider: string,
  ref: ResourceRef,
): Promise<ResourceOwner | undefined> {
  const { owner, vkId } = callerOwner(principal);
  let rec: ResourceOwner | undefined;
  try {
    rec = await store(rt).get(provider, ref.kind, recordedId(ref));
  } catch (err) {
    if (vkId === undefined) return undefined;
    rt.logger.error({ err: messageOf(err) }, 'resource owner lookup failed');
    throw new GatewayError('service_unavailable', 'the owner of this resource cannot be checked now; try again');
  }
  if (vkId !== undefined && rec?.owner !== owner) throw notFound(ref);
  return rec;
}

/**
 * A virtual key's proof that it owns every resource an inference request names at `provider` (checkOwner for
 * many: one query per kind named). The first it cannot prove answers 404; unreadable records answer 503.
 */
export async function checkOwnsAll(
  rt: Runtime,
  vkId: string,
  provider: string,
  refs: readonly ResourceRef[],
): Promise<void> {
  const missing = await firstUnowned(rt, vkId, provider, refs);
  if (missing) throw notFound(missing);
}

/**
 * The first of `refs` (by kind, then in order) the virtual key cannot prove it owns at `provider`, one query per
 * kind; undefined when it owns them all. Unreadable records answer 503 (fail closed).
 */
export async function firstUnowned(
  rt: Runtime,
  vkId: string,
  provider: string,
  refs: readonly ResourceRef[],
): Promise<ResourceRef | undefined> {
  const byKind = new Map<string, Set<string>>();
  for (const ref of refs) {
    const ids = byKind.get(ref.kind);
    if (ids) ids.add(recordedId(ref));
    else byKind.set(ref.kind, new Set([recordedId(ref)]));
  }
  for (const [kind, ids] of byKind) {
    const own = await store(rt)
      .ownedAmong(provider, kind, vkOwner(vkId), [...ids])
      .catch((err: unknown) => {
        rt.logger.error({ err: messageOf(err) }, 'resource owner lookup failed');
        throw new GatewayError(
          'service_unavailable',
          'the owner of a resource this request names cannot be checked now; try again',
        );
      });
    const missing = refs.find((ref) => ref.kind === kind && !own.has(recordedId(ref)));
    if (missing) return missing;
  }
  return undefined;
}

/** The owner record of a resource, for the gateway's own use (what a batch is charged to). */
export function ownerRecord(rt: Runtime, provider: string, ref: ResourceRef): Promise<ResourceOwner | undefined> {
  return store(rt).get(provider, ref.kind, recordedId(ref));
}

/**
 * Records `owner` for resources created under `keyId`, in one statement; a resource that already has an owner
 * keeps it. A failure is logged: the resources then answer 404 to virtual keys (fail closed) and stay reachable
 * by the admin.
 */
export async function recordOwner(
  rt: Runtime,
  owner: { owner: string; vkId: string | undefined | null },
  provider: string,
  refs: readonly ResourceRef[],
  keyId: string,
): Promise<void> {
  if (refs.length === 0) return;
  const resources = refs.map((ref) => ({ kind: ref.kind, resourceId: recordedId(ref) }));
  await store(rt)
    .recordAll({ owner: owner.owner, virtualKeyId: owner.vkId ?? null, keyId }, provider, resources)
    .catch((err: unknown) => {
      const kinds = [...new Set(refs.map((r) => r.kind))].join(',');
      rt.logger.error(
        { provider, kind: kinds, count: refs.length, err: messageOf(err) },
        'resource owner not recorded',
      );
    });
}

/**
 * The kind of the second owner row of a Gemini file whose lines were checked as a batch input when a virtual key
 * uploaded it (engine/batch-input-scan.ts), under the file's recorded id.
 */
export const BATCH_INPUT = 'batch_input';

/** Forgets a deleted resource's owner (best effort: a stale row only keeps a dead id 404 for others). */
export async function forgetOwner(rt: Runtime, provider: string, ref: ResourceRef): Promise<void> {
  const id = recordedId(ref);
  // A file's batch input row goes with it.
  const kinds = ref.kind === 'file' ? ['file', BATCH_INPUT] : [ref.kind];
  for (const kind of kinds) {
    await store(rt)
      .forget(provider, kind, id)
      .catch((err: unknown) => rt.logger.warn({ provider, err: messageOf(err) }, 'resource owner not forgotten'));
  }
}

/** A page of a provider's list in OpenAI's shape (Gemini's lists add `next_page_token`). */
export interface ListPage<T extends { id: string }> {
  data: T[];
  has_more: boolean;
  first_id?: string | null | undefined;
  last_id?: string | null | undefined;
  next_page_token?: string | null | undefined;
}

/**
 * One page of a list as the caller may see it. Other callers get the provider's page unchanged. A virtual key
 * gets only its own resources: provider pages are read from the caller's cursor, each asking for as many items
 * as are still wanted (so a page never needs cutting, whatever the provider's cursor), until `limit` own items
 * are found, the provider has no more, or MAX_LIST_PAGES were read. `has_more` is the provider's for the last
 * page read; `last_id` (and `next_page_token`) is where the reading stopped, so `after` continues from there
 * without skipping or repeating anything; `first_id` is the first item returned. A page may be short, or
 * empty with `has_more: true`, when the provider's list holds mostly other tenants' resources.
 */
export async function ownedPage<T extends { id: string }, P extends ListPage<T>>(
  rt: Runtime,
  principal: Principal | null,
  provider: string,
  kind: string,
  want: { limit?: number | undefined; after?: string | undefined },
  fetch: (after: string | undefined, limit: number | undefined) => Promise<P>,
): Promise<P> {
  const { owner, vkId } = callerOwner(principal);
  if (vkId === undefined) return fetch(want.after, want.limit);
  const kept: T[] = [];
  let target = want.limit;
  let cursor = want.after;
  let position = want.after;
  let page: P | undefined;
  for (let n = 0; n < MAX_LIST_PAGES; n++) {
    page = await fetch(cursor, target === undefined ? undefined : target - kept.length);
    target ??= page.data.length;
    const ids = page.data.map((item) => recordedId({ kind, id: item.id }));
    const own = await store(rt)
      .ownedAmong(provider, kind, owner, ids)
      .catch((err: unknown) => {
        rt.logger.error({ err: messageOf(err) }, 'resource owner lookup failed');
        throw new GatewayError('service_unavailable', 'the owners of this list cannot be checked now; try again');
      });
    kept.push(...page.data.filter((_, i) => own.has(ids[i]!)));
    position = page.data.at(-1)?.id ?? position;
    const next = page.next_page_token ?? page.data.at(-1)?.id ?? undefined;
    if (next !== undefined) cursor = next;
    if (!page.has_more || next === undefined || kept.length >= target) break;
  }
  const last = page!; // the loop runs at least once
  const out: P = { ...last, data: kept, first_id: kept[0]?.id ?? null, last_id: position ?? null };
  if (last.next_page_token !== undefined) out.next_page_token = last.next_page_token;
  return out;
}
