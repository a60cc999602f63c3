// Reads config.json (optional) and the process environment into validated settings.
import { readFile } from 'node:fs/promises';
import { messageOf } from '../util/errors.ts';
import { type AsyncSettings, readAsyncSettings } from './async-settings.ts';
import { formatIssues } from './issues.ts';
import { resolveEnvRefs } from './resolve-env.ts';
import { ConfigFile } from './schema.ts';

export interface EnvSettings {
  port: number;
  host: string;
  configPath: string | undefined;
  dataDir: string;
  databaseUrl: string | undefined;
  redisUrl: string | undefined;
  /** Prefix of every Redis key and channel (several gateways sharing one Redis). */
  redisKeyPrefix: string | undefined;
  encryptionKey: string | undefined;
  adminApiKey: string | undefined;
  logLevel: string;
  /** Timeouts of the HTTP server towards callers (ms). */
  server: ServerTimeouts;
  /** TLS certificate and key files (PEM): HTTPS with HTTP/2 by ALPN. Undefined: plain HTTP/1.1 and h2c. */
  tls: { certFile: string; keyFile: string } | undefined;
  /** GATEWAY_IMPORT_14_SQLITE: a 1.4.x SQLite configuration store imported once at start (state/upgrade). */
  import14Sqlite?: string | undefined;
  /** Async inference (GATEWAY_ASYNC_*); defaults when absent. */
  async?: AsyncSettings;
  /** GATEWAY_UI_DIR: the dashboard's built files (default: the repository's ui/dist). */
  uiDir?: string | undefined;
}

export interface ServerTimeouts {
  /** Until the request headers are complete (also an idle new connection). */
  headersTimeoutMs: number;
  /** Until the whole request, body included, is received. */
  requestTimeoutMs: number;
  /** An idle keep-alive connection between requests. */
  keepAliveTimeoutMs: number;
}

export class ConfigError extends Error {
  override readonly name = 'ConfigError';
}

export function readEnvSettings(env: Record<string, string | undefined>): EnvSettings {
  const port = Number(env['GATEWAY_PORT'] ?? 8080);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new ConfigError(`GATEWAY_PORT: expected a port number, got "${env['GATEWAY_PORT']}"`);
  }
  const level = env['GATEWAY_LOG_LEVEL'] ?? 'info';
  if (!['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].includes(level)) {
    throw new ConfigError(`GATEWAY_LOG_LEVEL: expected one of fatal, error, warn, info, debug, trace, silent`);
  }
  return {
    port,
    host: env['GATEWAY_HOST'] || '0.0.0.0',
    configPath: env['GATEWAY_CONFIG'] || undefined,
    dataDir: env['GATEWAY_DATA_DIR'] || './data',
    databaseUrl: env['DATABASE_URL'] || undefined,
    redisUrl: env['REDIS_URL'] || undefined,
    redisKeyPrefix: env['GATEWAY_REDIS_PREFIX'] || undefined,
    encryptionKey: env['GATEWAY_ENCRYPTION_KEY'] || undefined,
    adminApiKey: env['GATEWAY_ADMIN_API_KEY'] || undefined,
    logLevel: level,
    server: {
      headersTimeoutMs: positiveMs(env, 'GATEWAY_HEADERS_TIMEOUT_MS', 15_000),
      requestTimeoutMs: positiveMs(env, 'GATEWAY_REQUEST_TIMEOUT_MS', 60_000),
      keepAliveTimeoutMs: positiveMs(env, 'GATEWAY_KEEPALIVE_TIMEOUT_MS', 65_000),
    },
    tls: tlsFiles(env),
    import14Sqlite: env['GATEWAY_IMPORT_14_SQLITE'] || undefined,
    async: readAsyncSettings(env, (message) => new ConfigError(message)),
    uiDir: env['GATEWAY_UI_DIR'] || undefined,
  };
}

function tlsFiles(env: Record<string, string | undefined>): EnvSettings['tls'] {
  const certFile = env['GATEWAY_TLS_CERT_FILE'] || undefined;
  const keyFile = env['GATEWAY_TLS_KEY_FILE'] || undefined;
  if (!certFile && !keyFile) return undefined;
  if (!certFile || !keyFile) {
    throw new ConfigError('GATEWAY_TLS_CERT_FILE and GATEWAY_TLS_KEY_FILE: set both (PEM files) or neither');
  }
  return { certFile, keyFile };
}

function positiveMs(env: Record<string, string | undefined>, name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n <= 0) throw new ConfigError(`${name}: expected a positive number of milliseconds`);
  return n;
}

/** Parses config.json text; errors name the JSON path and what was expected. */
export function parseConfigFile(text: string, env: Record<string, string | undefined>): ConfigFile {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    throw new ConfigError(`config.json is not valid JSON: ${messageOf(err)}`);
  }
  const resolved = resolveEnvRefs(raw, env);
  if (!resolved.ok) throw new ConfigError(`config.json: ${resolved.error}`);
  const parsed = ConfigFile.safeParse(resolved.value);
  if (!parsed.success) throw new ConfigError(`config.json: ${formatIssues(parsed.error)}`);
  return parsed.data;
}

export async function loadConfigFile(
  path: string | undefined,
  env: Record<string, string | undefined>,
): Promise<ConfigFile> {
  if (!path) return ConfigFile.parse({});
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    throw new ConfigError(`GATEWAY_CONFIG: cannot read ${path}: ${errnoOf(err) ?? messageOf(err)}`);
  }
  return parseConfigFile(text, env);
}

function errnoOf(err: unknown): string | undefined {
  return err instanceof Error && 'code' in err && typeof err.code === 'string' ? err.code : undefined;
}
