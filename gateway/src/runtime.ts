// Everything a running gateway needs, built once in main.ts (or by a test) and passed down: no globals.
import type { Logger } from 'pino';
import type { Dispatcher } from 'undici';
import type { EnvSettings } from './config/load.ts';
import type { ConfigFile } from './config/schema.ts';
import type { PriceCache } from './governance/pricing/cache.ts';
import type { RoutingRuleEngine } from './governance/routing-rules.ts';
import type { AuthIndex } from './http/auth.ts';
import type { LiveHub } from './live/hub.ts';
import type { Mcp } from './mcp/index.ts';
import type { PluginHost } from './plugins/host.ts';
import type { McpToolLogger } from './plugins/logging/mcp-tool-log.ts';
import type { LogWriter } from './plugins/logging/writer.ts';
import type { Telemetry } from './plugins/telemetry/index.ts';
import type { Metrics } from './plugins/telemetry/metrics.ts';
import type { ProviderAdapter } from './providers/types.ts';
import type { State } from './state/index.ts';
import type { LogStore } from './state/services/logs.ts';
import type { McpLogStore } from './state/services/mcp-logs.ts';

export interface Runtime {
  env: EnvSettings;
  file: ConfigFile;
  state: State;
  adapters: ReadonlyMap<string, ProviderAdapter>;
  dispatcher: Dispatcher;
  logger: Logger;
  auth: AuthIndex;
  logStore: LogStore;
  logWriter: LogWriter;
  /** MCP tool executions (/api/mcp-logs) and the batching writer every tool call site records into. */
  mcpLogStore: McpLogStore;
  mcpToolLog: McpToolLogger;
  /** The `/ws` live-update clients of this process. */
  live: LiveHub;
  metrics: Metrics;
  /** The built-in plugins' effective settings and the engine hooks they implement. */
  plugins: PluginHost;
  /** The telemetry plugin: OpenTelemetry spans (OTEL_*) and the gen_ai metrics. */
  telemetry: Telemetry;
  /** Compiled routing-rule conditions, cached per rule. */
  routing: RoutingRuleEngine;
  prices: PriceCache;
  /** The MCP gateway: upstream tool servers, their OAuth. */
  mcp: Mcp;
  random: () => number;
  sleep: (ms: number) => Promise<void>;
  now: () => number;
}
