// The state module: the only code that touches Postgres or Redis. The gateway and the operator both open it.
import { randomUUID } from 'node:crypto';
import { createSecretBox, type SecretBox } from '../crypto/secretbox.ts';
import { openCoordinator } from './coord/open.ts';
import type { Coordinator, Unsubscribe } from './coord/types.ts';
import { migrate } from './db/migrate.ts';
import { openDb } from './db/open.ts';
import type { Db } from './db/types.ts';
import { isUnavailable } from './errors.ts';
import { CHANGES_CHANNEL, type ChangeEvent, parseChangeEvent } from './events.ts';
import { ChargeStore } from './governance/charges.ts';
import { GovernanceCounters } from './governance/counters.ts';
import { ChargeSpool } from './governance/spool.ts';
import { budgetUsageFn, rateCountsFn } from './governance/usage.ts';
import type { ProviderCatalog } from './services/catalog.ts';
import { ClientConfigService } from './services/client-config.ts';
import { BudgetService } from './services/governance/budgets.ts';
import { CustomerService } from './services/governance/customers.ts';
import { ModelConfigService } from './services/governance/model-limits/model-configs.ts';
import { ProviderGovernanceService } from './services/governance/model-limits/provider-governance.ts';
import { PricingOverrideService } from './services/governance/pricing-overrides.ts';
import { RateLimitService } from './services/governance/rate-limits.ts';
import { RoutingRuleService } from './services/governance/routing-rules.ts';
import { TeamService } from './services/governance/teams.ts';
import { VirtualKeyService } from './services/governance/virtual-keys.ts';
import { OwnedResources } from './services/kubernetes.ts';
import { McpClientService } from './services/mcp/clients.ts';
import { PluginService } from './services/plugins/index.ts';
import { ProviderService } from './services/providers.ts';
import { Snapshot, type SnapshotLogger } from './snapshot.ts';

export { StateError } from './errors.ts';
export type { ChangeEvent } from './events.ts';
export { stableId } from './ids.ts';
export type { Actor, ProviderCatalog } from './services/catalog.ts';
export { generateValue as generateVirtualKeyValue } from './services/governance/virtual-keys-value.ts';
export type { ApplyOutcome, OwnedRowRef } from './services/kubernetes.ts';

export interface StateOptions {
  databaseUrl?: string | undefined;
  dataDir?: string | undefined;
  redisUrl?: string | undefined;
  redisKeyPrefix?: string | undefined;
  encryptionKey?: string | undefined;
  /**
   * Where budget charges wait on disk while Postgres is unreachable (one directory per pod; it must outlive
   * the process, e.g. an emptyDir volume). Without it such charges are only logged (embedded PGlite needs none).
   */
  spoolDir?: string | undefined;
  catalog: ProviderCatalog;
  log: SnapshotLogger & { warn(obj: object, msg: string): void };
  /** Full reload period that heals missed change events. */
  fullReloadMs?: number;
  now?: () => number;
  /** Admit governed requests from this pod's leases while limits are far away (default on; leases.ts). */
  governanceLeases?: boolean;
  /** The 1.4.x upgrade (state/upgrade): `before` runs ahead of the migrations, `after` once they are done. */
  upgrade?: { before(db: Db): Promise<unknown>; after(db: Db): Promise<unknown> };
}

export interface State {
  db: Db;
  coord: Coordinator;
  box: SecretBox;
  snapshot: Snapshot;
  providers: ProviderService;
  clientConfig: ClientConfigService;
  virtualKeys: VirtualKeyService;
  budgets: BudgetService;
  teams: TeamService;
  customers: CustomerService;
  pricingOverrides: PricingOverrideService;
  routingRules: RoutingRuleService;
  rateLimits: RateLimitService;
  /** Budgets and rate limits per model (on one provider or all), for every request to it. */
  modelConfigs: ModelConfigService;
  /** Budgets and rate limits per provider, for every request to it. */
  providerGovernance: ProviderGovernanceService;
  /** MCP clients (upstream tool servers); the gateway attaches OAuth and the SSRF guard at start. */
  mcpClients: McpClientService;
  /** Plugin settings (/api/plugins, config.json plugins[]). */
  plugins: PluginService;
  /** The operator's write path: rows owned by Kubernetes resources. */
  owned: OwnedResources;
  /** Budget reservations and rate counters (atomic, shared across pods). */
  counters: GovernanceCounters;
  /** Durable budget charges in Postgres. */
  charges: ChargeStore;
  /** Applies a change to this pod's snapshot at once and tells the other pods (for writers outside the services). */
  publish(event: ChangeEvent): Promise<void>;
  /**
   * Calls `listener` with every change once this pod's snapshot has applied it, this pod's writes and other pods'
   * alike (not for the periodic full reload). Returns the function that removes it.
   */
  onChange(listener: (event: ChangeEvent) => void): () => void;
  close(): Promise<void>;
}

export async function openState(opts: StateOptions): Promise<State> {
  const db = await openDb({ databaseUrl: opts.databaseUrl, dataDir: opts.dataDir });
  try {
    await opts.upgrade?.before(db);
    await migrate(db);
    await opts.upgrade?.after(db);
  } catch (err) {
    await db.close();
    throw err;
  }
  const coord = await openCoordinator({ redisUrl: opts.redisUrl, keyPrefix: opts.redisKeyPrefix });
  const box = createSecretBox(opts.encryptionKey);
  const snapshot = new Snapshot(db, box, opts.log);
  const origin = randomUUID();
  const listeners = new Set<(event: ChangeEvent) => void>();
  const applied = (event: ChangeEvent): void => {
    for (const listener of listeners) {
      try {
        listener(event);
      } catch (err) {
        opts.log.warn({ err: err instanceof Error ? err.message : String(err) }, 'a change listener failed');
      }
    }
  };

  const publish = async (event: ChangeEvent): Promise<void> => {
    // This pod sees its own write at once; the others through the channel.
    await snapshot.apply(event);
    applied(event);
    await coord.publish(CHANGES_CHANNEL, JSON.stringify({ ...event, origin }));
  };

  await snapshot.reloadAll();
  const reloadAll = () =>
    snapshot.reloadAll().catch((err: Error) => opts.log.warn({ err: err.message }, 'snapshot reload failed'));
  const unsubscribe: Unsubscribe = await coord.subscribe(CHANGES_CHANNEL, (message) => {
    if (message.includes(origin)) return;
    const event = parseChangeEvent(message);
    if (!event) return;
    snapshot.apply(event).then(
      () => applied(event),
      (err: Error) => opts.log.warn({ err: err.message }, 'snapshot update failed'),
    );
  });

  const now = opts.now ?? Date.now;
  // Embedded PGlite runs every INSERT on the event loop: fewer, larger charge batches keep it from stalling
  // requests (governance added p50 at 1,000 req/s: +0.16..0.22 ms at 100 ms against +0.49..0.60 ms at 20 ms).
  const charges = new ChargeStore(db, {
    ...(db.kind === 'pglite' ? { batchWindowMs: 100 } : {}),
    spool: opts.spoolDir ? new ChargeSpool({ dir: opts.spoolDir }) : undefined,
    log: opts.log,
  });
  // Governed requests are admitted from this pod's leases while their limits are far away (leases.ts).
  const counters = new GovernanceCounters(
    coord,
    charges,
    opts.governanceLeases === false ? {} : { leases: { now, log: opts.log } },
  );
  const heal = () =>
    counters.heal(now()).catch((err: Error) => {
      // Still down: retried by the timer below, no warning every 2 s of an outage.
      if (!isUnavailable(err)) opts.log.warn({ err: err.message }, 'reloading stale budgets failed');
    });
  coord.onReconnect(() => {
    void reloadAll();
    void heal();
  });
  const timer = setInterval(() => void reloadAll(), opts.fullReloadMs ?? 30_000);
  timer.unref();
  // Retries a heal that failed (Postgres was down too, or Redis went again); idle when nothing is stale.
  const healTimer = setInterval(() => counters.stalePeriods > 0 && void heal(), 2_000);
  healTimer.unref();
  const usage = budgetUsageFn(counters, now);
  const catalog = opts.catalog;
  const providers = new ProviderService({ db, box, catalog, publish });
  const virtualKeys = new VirtualKeyService({ db, catalog, publish, usage });
  const mcpClients = new McpClientService({ db, box, publish });
  const rateCounts = rateCountsFn(counters, now);
  const limitDeps = {
    db,
    publish,
    usage,
    rateCounts,
    hasProvider: async (name: string) =>
      (await db.query('SELECT 1 FROM providers WHERE name = $1', [name])).rowCount > 0,
  };
  return {
    db,
    coord,
    box,
    snapshot,
    providers,
    clientConfig: new ClientConfigService(db, publish),
    virtualKeys,
    budgets: new BudgetService({ db, usage }),
    teams: new TeamService({ db, publish, usage }),
    customers: new CustomerService({ db, publish, usage }),
    pricingOverrides: new PricingOverrideService({ db, catalog, publish }),
    routingRules: new RoutingRuleService({ db, catalog, publish }),
    rateLimits: new RateLimitService({ db, counts: rateCounts }),
    modelConfigs: new ModelConfigService(limitDeps),
    providerGovernance: new ProviderGovernanceService(limitDeps),
    mcpClients,
    plugins: new PluginService({ db, publish }),
    owned: new OwnedResources({ db, providers, virtualKeys, mcpClients }),
    counters,
    charges,
    publish,
    onChange(listener) {
      listeners.add(listener);
      return () => {
        listeners.delete(listener);
      };
    },
    async close() {
      clearInterval(timer);
      clearInterval(healTimer);
      listeners.clear();
      await counters.close().catch(() => undefined);
      await charges.close().catch(() => undefined);
      await unsubscribe().catch(() => undefined);
      await coord.close();
      await db.close();
    },
  };
}
