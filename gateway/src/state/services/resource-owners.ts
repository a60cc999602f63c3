// Owners of provider-held resources (migration 017): which virtual key (or the gateway) created a file, batch,
// video, container, stored response or stored response item, and with which provider key. Rows are written once
// and never moved to another owner; those of stored responses and their items are deleted once the provider has
// expired them (retention round).
import type { Db } from '../db/types.ts';

export interface ResourceOwner {
  /** `vk:<id>` or `gateway`. */
  owner: string;
  virtualKeyId: string | null;
  keyId: string;
}

export interface OwnedResource extends ResourceOwner {
  provider: string;
  kind: string;
  resourceId: string;
}

export class ResourceOwnerStore {
  readonly #db: Db;

  constructor(db: Db) {
    this.#db = db;
  }

  /**
   * Records the owner of a resource the gateway just created, or of one an owned resource names (a batch's
   * output file); a resource that already has an owner keeps it.
   */
  async record(r: OwnedResource): Promise<void> {
    await this.recordAll(r, r.provider, [{ kind: r.kind, resourceId: r.resourceId }]);
  }

  /**
   * Records one owner for several resources in one statement (a stored response and its output items), so a
   * write costs one round trip whatever the count; a resource that already has an owner keeps it.
   */
  async recordAll(
    owner: ResourceOwner,
    provider: string,
    resources: readonly { kind: string; resourceId: string }[],
  ): Promise<void> {
    if (resources.length === 0) return;
    await this.#db.query(
      `INSERT INTO resource_owners (provider, kind, resource_id, owner, virtual_key_id, key_id)
       SELECT $1, r.kind, r.resource_id, $4, $5, $6 FROM unnest($2::text[], $3::text[]) AS r(kind, resource_id)
       ON CONFLICT (provider, kind, resource_id) DO NOTHING`,
      [
        provider,
        resources.map((r) => r.kind),
        resources.map((r) => r.resourceId),
        owner.owner,
        owner.virtualKeyId,
        owner.keyId,
      ],
    );
  }

  async get(provider: string, kind: string, resourceId: string): Promise<ResourceOwner | undefined> {
    const { rows } = await this.#db.query<{ owner: string; virtual_key_id: string | null; key_id: string }>(
      'SELECT owner, virtual_key_id, key_id FROM resource_owners WHERE provider = $1 AND kind = $2 AND resource_id = $3',
      [provider, kind, resourceId],
    );
    const row = rows[0];
    return row && { owner: row.owner, virtualKeyId: row.virtual_key_id, keyId: row.key_id };
  }

  /** Which of `ids` belong to `owner`. */
  async ownedAmong(provider: string, kind: string, owner: string, ids: readonly string[]): Promise<Set<string>> {
    if (ids.length === 0) return new Set();
    const { rows } = await this.#db.query<{ resource_id: string }>(
      `SELECT resource_id FROM resource_owners
       WHERE provider = $1 AND kind = $2 AND owner = $3 AND resource_id = ANY($4::text[])`,
      [provider, kind, owner, ids],
    );
    return new Set(rows.map((r) => r.resource_id));
  }

  /**
   * Deletes the rows of what a stored response leaves (STORED_RESPONSE_KINDS) created more than
   * STORED_RESPONSE_DAYS before `nowMs`: the provider has expired them. One delete per kind, each on migration
   * 018's (kind, created_at) index; the count.
   */
  async expireStoredResponses(nowMs: number): Promise<number> {
    const cutoff = nowMs - STORED_RESPONSE_DAYS * 86_400_000;
    let deleted = 0;
    for (const kind of STORED_RESPONSE_KINDS) deleted += await this.deleteCreatedBefore(kind, cutoff);
    return deleted;
  }

  /** Deletes the rows of `kind` created before `cutoffMs` (resources the provider has expired); the count. */
  async deleteCreatedBefore(kind: string, cutoffMs: number): Promise<number> {
    const { rowCount } = await this.#db.query('DELETE FROM resource_owners WHERE kind = $1 AND created_at < $2', [
      kind,
      new Date(cutoffMs),
    ]);
    return rowCount;
  }

  /** Forgets a resource the provider deleted. */
  async forget(provider: string, kind: string, resourceId: string): Promise<void> {
    await this.#db.query('DELETE FROM resource_owners WHERE provider = $1 AND kind = $2 AND resource_id = $3', [
      provider,
      kind,
      resourceId,
    ]);
  }
}

/**
 * How long a provider keeps a stored Response (OpenAI and Azure: 30 days), plus a day: after that its
 * `previous_response_id` fails at the provider anyway, so the owner row only takes space.
 */
export const STORED_RESPONSE_DAYS = 31;

/** The kinds a stored response leaves: its own row and those of its output items (`item_reference` names them). */
export const STORED_RESPONSE_KINDS = ['response', 'response_item'] as const;
