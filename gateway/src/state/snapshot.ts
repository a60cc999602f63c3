// The read model every request uses: providers with their (decrypted) keys, client settings, admin key hashes.
// Rebuilt piece by piece from change events; never queried per request.
import type { ClientConfig } from '../config/schema.ts';
import { ClientConfig as ClientConfigSchema } from '../config/schema.ts';
import type { SecretBox } from '../crypto/secretbox.ts';
import type { GovernanceModel } from '../governance/model.ts';
import type { McpClientRecord } from '../mcp/types.ts';
import type { OutboundProxy } from '../providers/shared/outbound.ts';
import type { NetworkConfig, ProviderKey } from '../providers/types.ts';
import { messageOf } from '../util/errors.ts';
import type { Db } from './db/types.ts';
import type { ChangeEvent } from './events.ts';
import { readAdminKeyHashes } from './services/admin-keys.ts';
import { readClientConfig } from './services/client-config.ts';
import { loadGovernanceConsistent, reloadVirtualKeys } from './services/governance/load.ts';
import { NO_MODEL_LIMITS } from './services/governance/model-limits/snapshot.ts';
import { type KeyRow, KeySecrets, toProviderKey } from './services/key-record.ts';
import { readMcpClients } from './services/mcp/rows.ts';
import { toNetworkConfig } from './services/network.ts';
import { type PluginRow, readPluginRows } from './services/plugins/index.ts';
import type { ProviderRow } from './services/providers.ts';
import { readOutboundProxy } from './services/proxy-config.ts';

export interface ProviderEntry {
  name: string;
  network: NetworkConfig;
  keys: ProviderKey[];
  keysById: Map<string, ProviderKey>;
  keysByName: Map<string, ProviderKey>;
}

interface Waiter {
  resolve(): void;
  reject(err: unknown): void;
}

export interface SnapshotLogger {
  error(obj: object, msg: string): void;
}

export class Snapshot {
  providers = new Map<string, ProviderEntry>();
  client: ClientConfig = ClientConfigSchema.parse({});
  governance: GovernanceModel = {
    virtualKeysByHash: new Map(),
    virtualKeysById: new Map(),
    teams: new Map(),
    customers: new Map(),
    routingRules: [],
    pricingOverrides: [],
    modelLimits: NO_MODEL_LIMITS,
  };
  /** MCP clients (upstream tool servers) by id, secrets opened. */
  mcpClients = new Map<string, McpClientRecord>();
  /** Hashes of admin keys stored in the database (bootstrap and API-created). */
  adminKeyHashes = new Set<string>();
  /** Stored plugin settings by name; a built-in plugin without a row runs with its defaults (plugins/host.ts). */
  plugins = new Map<string, PluginRow>();
  /** The outbound proxy provider calls use (`/api/proxy-config`), undefined when they go direct. */
  proxy: OutboundProxy | undefined = undefined;
  /** Incremented on every change; lets caches keyed on the snapshot know they are stale. */
  version = 0;

  private readonly db: Db;
  private readonly box: SecretBox;
  private readonly log: SnapshotLogger;

  constructor(db: Db, box: SecretBox, log: SnapshotLogger) {
    this.db = db;
    this.box = box;
    this.log = log;
  }

  private readonly droppedClientFields = (fields: string[]): void =>
    this.log.error(
      { fields },
      'stored client settings the current rules refuse: their defaults apply until PUT /api/config',
    );

  async reloadAll(): Promise<void> {
    const { rows } = await this.db.query<ProviderRow & Record<string, unknown>>('SELECT * FROM providers');
    const { rows: keyRows } = await this.db.query<KeyRow & Record<string, unknown>>(
      'SELECT * FROM provider_keys ORDER BY created_at, name',
    );
    const next = new Map<string, ProviderEntry>();
    for (const row of rows) {
      next.set(
        row.name,
        this.entry(
          row,
          keyRows.filter((k) => k.provider === row.name),
        ),
      );
    }
    this.providers = next;
    this.client = await readClientConfig(this.db, this.droppedClientFields);
    await this.reloadProxy();
    this.adminKeyHashes = new Set(await readAdminKeyHashes(this.db));
    await this.governanceChanged(undefined);
    await this.reloadMcpClients();
    await this.reloadPlugins();
    this.version++;
  }

  async apply(event: ChangeEvent): Promise<void> {
    switch (event.kind) {
      case 'provider':
        await this.reloadProvider(event.name);
        break;
      case 'client_config':
        this.client = await readClientConfig(this.db, this.droppedClientFields);
        await this.reloadProxy();
        break;
      case 'admin_keys':
        this.adminKeyHashes = new Set(await readAdminKeyHashes(this.db));
        break;
      case 'governance':
        await this.governanceChanged(event.virtual_key_ids);
        break;
      case 'mcp':
        await this.reloadMcpClients();
        break;
      case 'plugins':
        await this.reloadPlugins();
        break;
    }
    this.version++;
  }

  /** Governance changes not yet read: everything (`full`) or just these virtual keys. */
  private governancePending: { full: boolean; ids: Set<string>; waiters: Waiter[] } = {
    full: false,
    ids: new Set(),
    waiters: [],
  };
  private governanceReading = false;

  /**
   * Reads the governance changes (all of it when `ids` is undefined) into the model; resolves once a read that
   * started after this call has finished. One read at a time, and the changes that arrive meanwhile are read
   * together by the next: a burst of change events (an operator applying 1,000 VirtualKeys) costs a few reads
   * instead of one full reload each, and a slow full read can never overwrite a newer key with an older copy.
   */
  private governanceChanged(ids: readonly string[] | undefined): Promise<void> {
    return new Promise((resolve, reject) => {
      const pending = this.governancePending;
      if (ids === undefined) pending.full = true;
      else for (const id of ids) pending.ids.add(id);
      pending.waiters.push({ resolve, reject });
      if (!this.governanceReading) void this.readGovernance();
    });
  }

  private async readGovernance(): Promise<void> {
    this.governanceReading = true;
    try {
      while (this.governancePending.waiters.length > 0) {
        const { full, ids, waiters } = this.governancePending;
        this.governancePending = { full: false, ids: new Set(), waiters: [] };
        try {
          this.governance = full
            ? await loadGovernanceConsistent(this.db)
            : await reloadVirtualKeys(this.db, this.governance, ids);
          this.version++;
          for (const w of waiters) w.resolve();
        } catch (err) {
          for (const w of waiters) w.reject(err);
        }
      }
    } finally {
      this.governanceReading = false;
    }
  }

  private readonly mcpListeners = new Set<() => void>();

  /** Calls `fn` after every reload of the MCP clients (the connection manager reconciles its connections). */
  onMcpClients(fn: () => void): () => void {
    this.mcpListeners.add(fn);
    return () => this.mcpListeners.delete(fn);
  }

  private async reloadMcpClients(): Promise<void> {
    const clients = await readMcpClients(this.db, this.box, this.log);
    this.mcpClients = new Map(clients.map((c) => [c.id, c]));
    for (const fn of this.mcpListeners) fn();
  }

  private readonly proxyListeners = new Set<(p: OutboundProxy | undefined) => void>();
  /** The proxy's settings as last applied (a full reload applies an unchanged proxy to nobody). */
  private proxyKey = 'undefined';

  /** Calls `fn` with the proxy now and after every change of it (the outbound dispatcher switches). */
  onProxy(fn: (p: OutboundProxy | undefined) => void): () => void {
    this.proxyListeners.add(fn);
    fn(this.proxy);
    return () => this.proxyListeners.delete(fn);
  }

  private async reloadProxy(): Promise<void> {
    const next = await readOutboundProxy(this.db, this.box);
    const key = JSON.stringify(next) ?? 'undefined';
    if (key === this.proxyKey) return;
    this.proxyKey = key;
    this.proxy = next;
    for (const fn of this.proxyListeners) fn(next);
  }

  private readonly pluginListeners = new Set<() => void>();

  /** Calls `fn` after every reload of the plugin settings (running plugins follow their switch). */
  onPlugins(fn: () => void): () => void {
    this.pluginListeners.add(fn);
    return () => this.pluginListeners.delete(fn);
  }

  private async reloadPlugins(): Promise<void> {
    this.plugins = new Map((await readPluginRows(this.db)).map((r) => [r.name, r]));
    for (const fn of this.pluginListeners) fn();
  }

  private async reloadProvider(name: string): Promise<void> {
    const { rows } = await this.db.query<ProviderRow & Record<string, unknown>>(
      'SELECT * FROM providers WHERE name = $1',
      [name],
    );
    const row = rows[0];
    if (!row) {
      this.providers.delete(name);
      return;
    }
    const { rows: keyRows } = await this.db.query<KeyRow & Record<string, unknown>>(
      'SELECT * FROM provider_keys WHERE provider = $1 ORDER BY created_at, name',
      [name],
    );
    this.providers.set(name, this.entry(row, keyRows));
  }

  private entry(row: ProviderRow, keyRows: KeyRow[]): ProviderEntry {
    const keys: ProviderKey[] = [];
    for (const k of keyRows) {
      try {
        keys.push(toProviderKey(k, KeySecrets.parse(JSON.parse(this.box.open(k.secret)))));
      } catch (err) {
        // One unreadable key must not take the provider down; it is left out and reported.
        this.log.error({ provider: row.name, key_id: k.id, err: messageOf(err) }, 'provider key skipped');
      }
    }
    return {
      name: row.name,
      network: toNetworkConfig(row.network_config),
      keys,
      keysById: new Map(keys.map((k) => [k.id, k])),
      keysByName: new Map(keys.map((k) => [k.name, k])),
    };
  }
}
