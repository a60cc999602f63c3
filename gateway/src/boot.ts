// Builds a Runtime from settings and starts serving. main.ts calls it for the process; tests call it to
// run a real gateway in-process.
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { type Logger, pino } from 'pino';
import { type App, buildApp } from './app.ts';
import { startAsyncWorker } from './async/start.ts';
import { type EnvSettings, loadConfigFile } from './config/load.ts';
import type { ConfigFile } from './config/schema.ts';
import { PriceCache } from './governance/pricing/cache.ts';
import { RoutingRuleEngine } from './governance/routing-rules.ts';
import { buildAuthIndex } from './http/auth.ts';
import { LiveHub, type LiveTuning } from './live/hub.ts';
import { LIVE_LOGS_CHANNEL, MAX_LIVE_CONTENT_CHARS, storedLogsNotice } from './live/messages.ts';
import { createMcp, type Mcp } from './mcp/index.ts';
import { checkOutboundUrl, OutboundAllowList } from './mcp/ssrf.ts';
import { PluginHost } from './plugins/host.ts';
import { McpToolLogger, mcpLogsDroppedCounter } from './plugins/logging/mcp-tool-log.ts';
import { startRetention } from './plugins/logging/retention.ts';
import { LogWriter } from './plugins/logging/writer.ts';
import { engineEmbedder } from './plugins/semantic-cache/embed.ts';
import { SemanticCache } from './plugins/semantic-cache/index.ts';
import { createTelemetry, type Telemetry } from './plugins/telemetry/index.ts';
import { createMetrics } from './plugins/telemetry/metrics.ts';
import { createAdapters, providerCatalog } from './providers/registry.ts';
import { OutboundDispatcher } from './providers/shared/outbound.ts';
import type { Runtime } from './runtime.ts';
import { isInitialised } from './state/db/pglite-init.ts';
import type { Db } from './state/db/types.ts';
import { openState } from './state/index.ts';
import { bootstrapAdminKey } from './state/services/admin-keys.ts';
import { CacheStore } from './state/services/cache/index.ts';
import { applyGovernanceConfig } from './state/services/governance/config-file.ts';
import { LogStore } from './state/services/logs.ts';
import { applyMcpConfig } from './state/services/mcp/config-file.ts';
import { McpLogStore } from './state/services/mcp-logs.ts';
import { ResourceOwnerStore } from './state/services/resource-owners.ts';
import { DirSpool, spoolDirFor } from './state/spool.ts';
import { importSqlite14, upgradePostgres14 } from './state/upgrade/index.ts';

export interface BootOptions {
  env: EnvSettings;
  /** config.json already parsed (tests); otherwise read from env.configPath. */
  file?: ConfigFile;
  processEnv?: Record<string, string | undefined>;
  logger?: Logger;
  /** Key prefix in Redis (tests sharing one Redis isolate by it). */
  redisKeyPrefix?: string;
  /** Called with a generated admin key (printed once by main.ts). */
  onGeneratedAdminKey?: (key: string) => void;
  /** Settings of the `/ws` live-update hub (tests shorten the heartbeat, lower the client bound). */
  live?: LiveTuning;
}

export interface Gateway {
  rt: Runtime;
  app: App;
  /** Base URL once listening. */
  url: string;
  close(): Promise<void>;
}

export function createLogger(level: string): Logger {
  return pino({
    level,
    redact: {
      paths: [
        '*.value',
        '*.secret_key',
        '*.session_token',
        '*.authorization',
        '*.api_key',
        '*.password',
        '*.auth_credentials',
      ],
      censor: '[redacted]',
    },
  });
}

/** The 1.4.x upgrade: a 1.4.x Postgres store before the migrations, a 1.4.x SQLite file after them. */
function upgradeHooks(env: EnvSettings, logger: Logger) {
  const opts = {
    catalog: providerCatalog,
    log: logger,
    encryptionKey: env.encryptionKey,
    sqliteFile: env.import14Sqlite,
  };
  return { before: (db: Db) => upgradePostgres14(db, opts), after: (db: Db) => importSqlite14(db, opts) };
}

export async function bootGateway(opts: BootOptions): Promise<Gateway> {
  const { env } = opts;
  const logger = opts.logger ?? createLogger(env.logLevel);
  const file = opts.file ?? (await loadConfigFile(env.configPath, opts.processEnv ?? process.env));
  for (const warning of file.warnings ?? []) logger.warn(warning);
  const spoolDir = env.databaseUrl ? spoolDirFor(env.dataDir, env.databaseUrl) : undefined;
  // Start-up progress (a first embedded start takes seconds): where the database is, never its URL.
  const embedded = !env.databaseUrl;
  const openingAt = Date.now();
  logger.info(
    { database: embedded ? `embedded PGlite in ${env.dataDir}` : 'Postgres (DATABASE_URL)' },
    embedded && !isInitialised(env.dataDir)
      ? 'creating the embedded database (first start: a few seconds) and applying migrations'
      : 'opening the database and applying migrations',
  );
  const state = await openState({
    databaseUrl: env.databaseUrl,
    dataDir: env.databaseUrl ? undefined : env.dataDir,
    redisUrl: env.redisUrl,
    redisKeyPrefix: opts.redisKeyPrefix ?? env.redisKeyPrefix,
    encryptionKey: env.encryptionKey,
    // Charges wait here while Postgres is down (PGlite lives in the process: nothing to wait for).
    spoolDir,
    catalog: providerCatalog,
    log: logger,
    upgrade: upgradeHooks(env, logger),
  });
  logger.info({ ms: Date.now() - openingAt }, 'database ready');
  let dispatcher: OutboundDispatcher | undefined;
  let logWriter: LogWriter | undefined;
  let mcpToolLog: McpToolLogger | undefined;
  let mcp: Mcp | undefined;
  let telemetry: Telemetry | undefined;
  let live: LiveHub | undefined;
  try {
    // Before config.json is applied: its MCP clients go through the SSRF guard and, for OAuth, the OAuth part.
    mcp = createMcp({ state, file, logger, now: () => Date.now() });
    const outbound = new OutboundAllowList(file.mcp.allowed_private_networks);
    state.mcpClients.attach({ oauth: mcp.oauth, checkUrl: (url) => checkOutboundUrl(url, outbound) });
    if (opts.file || env.configPath) {
      await state.clientConfig.applyConfigFile(file.client);
      await state.providers.applyConfigFile(file);
      // Before governance: the file's virtual keys may name these clients.
      await applyMcpConfig(state, file);
      await applyGovernanceConfig(state, file);
      await state.plugins.applyConfigFile(file.plugins);
    }
    const configuredAdmin = Boolean(env.adminApiKey) || file.auth.admin_api_keys.length > 0;
    const { generated } = await bootstrapAdminKey(state.db, configuredAdmin);
    if (generated) {
      await state.snapshot.apply({ kind: 'admin_keys' });
      opts.onGeneratedAdminKey?.(generated);
    }
    const logStore = new LogStore(state.db);
    const mcpLogStore = new McpLogStore(state.db);
    const upstream = new OutboundDispatcher({ keepAliveTimeout: 30_000, connections: 512, pipelining: 1 });
    dispatcher = upstream;
    // Provider calls follow /api/proxy-config on every pod (a change event reloads it).
    state.snapshot.onProxy((p) => upstream.setProxy(p));
    const metrics = createMetrics();
    telemetry = await createTelemetry({
      env: opts.processEnv ?? process.env,
      logger,
      registry: metrics.registry,
      providers: () => state.snapshot.providers,
      now: () => Date.now(),
    });
    logWriter = new LogWriter(logStore, {
      // Rows the database refuses wait on disk (PGlite lives in the process: nothing to wait for).
      spool: spoolDir ? new DirSpool({ dir: spoolDir, kind: 'logs' }) : undefined,
      onError: (err, dropped) => logger.warn({ err: err.message, dropped }, 'writing request logs failed; will retry'),
      onDropped: (rows) => metrics.logsDropped.inc(rows),
      // Every pod's /ws clients hear of the rows stored here (live/hub.ts).
      onStored: (ids) => {
        state.coord
          .publish(LIVE_LOGS_CHANNEL, storedLogsNotice(ids))
          .catch((err: Error) => logger.warn({ err: err.message }, 'live logs: publishing a notice failed'));
      },
    });
    const hub = new LiveHub({
      ...opts.live,
      subscribeLogs: (onMessage) => state.coord.subscribe(LIVE_LOGS_CHANNEL, onMessage),
      loadLogs: (ids, kind) =>
        (kind === 'mcp' ? mcpLogStore : logStore).byIds(ids, { maxContentChars: MAX_LIVE_CONTENT_CHARS }),
      log: logger,
    });
    live = hub;
    const stopStoreUpdates = state.onChange((event) => hub.storeChanged(event));
    const writer = logWriter;
    metrics.watchLogQueue(() => writer.pending);
    const plugins = new PluginHost({
      rows: () => state.snapshot.plugins,
      onChange: (fn) => state.snapshot.onPlugins(fn),
      env: opts.processEnv ?? process.env,
      writeLog: (entry) => writer.push(entry),
      log: logger,
    });
    // MCP tool calls' rows: same writer, switches, spool and live notices as request logs (their own table).
    const mcpDropped = mcpLogsDroppedCounter(metrics.registry);
    const toolLog = new McpToolLogger(mcpLogStore, () => plugins.plugins.logging, {
      spool: spoolDir ? new DirSpool({ dir: spoolDir, kind: 'mcplogs' }) : undefined,
      onError: (err, dropped) => logger.warn({ err: err.message, dropped }, 'writing MCP tool logs failed; will retry'),
      onDropped: (rows) => mcpDropped.inc(rows),
      onStored: (ids) => {
        state.coord
          .publish(LIVE_LOGS_CHANNEL, storedLogsNotice(ids, 'mcp'))
          .catch((err: Error) => logger.warn({ err: err.message }, 'live logs: publishing a notice failed'));
      },
    });
    mcpToolLog = toolLog;
    // The telemetry plugin follows its row (/api/plugins, config.json) on every pod.
    const tel = telemetry;
    tel.setEnabled(plugins.plugins.telemetry.enabled);
    plugins.onChange((p) => tel.setEnabled(p.telemetry.enabled));
    plugins.setStatusSource('telemetry', () => ({
      status: 'active',
      logs: [
        tel.tracing
          ? 'traces exported over OTLP (OTEL_*)'
          : 'traces off: no OTLP exporter in OTEL_*; gen_ai metrics on',
      ],
    }));
    const rt: Runtime = {
      env,
      file,
      state,
      adapters: createAdapters(),
      dispatcher: upstream,
      logger,
      auth: buildAuthIndex(file.auth, env.adminApiKey),
      logStore,
      logWriter,
      mcpLogStore,
      mcpToolLog: toolLog,
      live: hub,
      metrics,
      telemetry,
      plugins,
      routing: new RoutingRuleEngine(),
      prices: new PriceCache(),
      mcp,
      random: Math.random,
      sleep: (ms) => sleep(ms),
      now: () => Date.now(),
    };
    // The semantic cache: entries in Postgres; its embedding calls run through this runtime's engine.
    const cache = new SemanticCache({
      store: new CacheStore(state.db),
      embed: engineEmbedder(rt),
      log: logger,
      enabled: () => plugins.plugins.semantic_cache.enabled,
    });
    plugins.attachCache(cache);
    plugins.setStatusSource('semantic_cache', () => cache.status(plugins.plugins.semantic_cache.config));
    cache.startSweeping();
    const app = buildApp(rt);
    const listening = await app.fastify.listen({ port: env.port, host: env.host });
    // fastify names the scheme from its own https option; TLS here comes from the server factory.
    const address = env.tls ? listening.replace(/^http:/, 'https:') : listening;
    // Retention: one pod per round deletes the rows past client.log_retention_days.
    const owners = new ResourceOwnerStore(state.db);
    const stopRetention = startRetention(
      {
        store: logStore,
        mcpLogs: mcpLogStore,
        coord: state.coord,
        days: () => state.snapshot.client.log_retention_days,
        expireOwners: (now) => owners.expireStoredResponses(now),
        log: logger,
      },
      randomUUID(),
    );
    // Async jobs: this pod's worker and the sweep of expired results.
    const asyncWorker = startAsyncWorker(rt);
    const closeAll = async () => {
      stopRetention();
      app.drain();
      stopStoreUpdates();
      // Live clients are told the gateway is going away (1001) before the server closes under them.
      await hub.close();
      await app.fastify.close();
      await asyncWorker.close();
      await cache.close();
      await mcp?.close();
      await logWriter?.close();
      await mcpToolLog?.writer.close();
      await telemetry?.shutdown();
      await dispatcher?.close();
      await state.close();
    };
    return { rt, app, url: address, close: closeAll };
  } catch (err) {
    await live?.close().catch(() => undefined);
    await mcp?.close().catch(() => undefined);
    await logWriter?.close().catch(() => undefined);
    await mcpToolLog?.writer.close().catch(() => undefined);
    await telemetry?.shutdown().catch(() => undefined);
    await dispatcher?.close().catch(() => undefined);
    await state.close().catch(() => undefined);
    throw err;
  }
}
