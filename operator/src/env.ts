// The operator's environment (zod): where the state lives, what to watch, and how to elect a leader.
import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { z } from 'zod';

const SERVICE_ACCOUNT_NAMESPACE = '/var/run/secrets/kubernetes.io/serviceaccount/namespace';

const Env = z.object({
  DATABASE_URL: z.string({ error: 'required: the operator writes to the Postgres the gateways read' }),
  REDIS_URL: z.string({ error: 'required: change events reach the gateways through Redis' }),
  GATEWAY_REDIS_PREFIX: z.string().optional(),
  OPERATOR_NAMESPACE: z.string().optional(),
  POD_NAME: z.string().optional(),
  OPERATOR_LEASE_NAME: z.string().default('model-gateway-operator'),
  OPERATOR_LEASE_DURATION_SECONDS: z.coerce.number().int().min(2).max(300).default(15),
  OPERATOR_RESYNC_SECONDS: z.coerce.number().positive().max(86_400).default(60),
  // Concurrent reconciles per kind (never two for one resource): a reconcile mostly waits on the API server and
  // Postgres, so a bulk apply goes as fast as the work queue keeps several in flight.
  OPERATOR_WORKERS: z.coerce.number().int().min(1).max(64).default(8),
  OPERATOR_HEALTH_PORT: z.coerce.number().int().min(0).max(65_535).default(8081),
  OPERATOR_HEALTH_HOST: z.string().default('0.0.0.0'),
  ENCRYPTION_KEY_SECRET: z.string().optional(),
  ENCRYPTION_KEY_SECRET_KEY: z.string().default('encryption-key'),
  GATEWAY_ENCRYPTION_KEY: z.string().optional(),
  GATEWAY_LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  // The gateways' mcp.allowed_private_networks (comma-separated): OAuth endpoints of MCPClients are checked
  // against it when their configuration is written.
  OPERATOR_MCP_ALLOWED_PRIVATE_NETWORKS: z
    .string()
    .max(65_536)
    .transform((v) =>
      v
        .split(',')
        .map((x) => x.trim())
        .filter((x) => x !== ''),
    )
    .pipe(z.array(z.string().max(256, 'an entry longer than 256 characters')).max(256))
    .default([]),
});

export interface OperatorEnv {
  databaseUrl: string;
  redisUrl: string;
  redisKeyPrefix: string | undefined;
  namespace: string;
  identity: string;
  leaseName: string;
  leaseDurationSeconds: number;
  resyncMs: number;
  /** Concurrent reconciles per kind. */
  workers: number;
  healthPort: number;
  healthHost: string;
  encryptionKeySecret: string | undefined;
  encryptionKeySecretKey: string;
  encryptionKey: string | undefined;
  logLevel: string;
  /** CIDR blocks and host names the SSRF guard admits for MCPClient OAuth endpoints. */
  mcpAllowedPrivateNetworks: string[];
}

export function readOperatorEnv(env: NodeJS.ProcessEnv): OperatorEnv {
  const parsed = Env.safeParse(Object.fromEntries(Object.entries(env).filter(([, v]) => v !== '')));
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new Error(`${issue?.path.join('.') ?? 'environment'}: ${issue?.message ?? 'invalid'}`);
  }
  const e = parsed.data;
  return {
    databaseUrl: e.DATABASE_URL,
    redisUrl: e.REDIS_URL,
    redisKeyPrefix: e.GATEWAY_REDIS_PREFIX,
    namespace: e.OPERATOR_NAMESPACE ?? serviceAccountNamespace() ?? 'default',
    identity: e.POD_NAME ?? `${hostname()}-${process.pid}`,
    leaseName: e.OPERATOR_LEASE_NAME,
    leaseDurationSeconds: e.OPERATOR_LEASE_DURATION_SECONDS,
    resyncMs: e.OPERATOR_RESYNC_SECONDS * 1000,
    workers: e.OPERATOR_WORKERS,
    healthPort: e.OPERATOR_HEALTH_PORT,
    healthHost: e.OPERATOR_HEALTH_HOST,
    encryptionKeySecret: e.ENCRYPTION_KEY_SECRET,
    encryptionKeySecretKey: e.ENCRYPTION_KEY_SECRET_KEY,
    encryptionKey: e.GATEWAY_ENCRYPTION_KEY,
    logLevel: e.GATEWAY_LOG_LEVEL,
    mcpAllowedPrivateNetworks: e.OPERATOR_MCP_ALLOWED_PRIVATE_NETWORKS,
  };
}

function serviceAccountNamespace(): string | undefined {
  try {
    return readFileSync(SERVICE_ACCOUNT_NAMESPACE, 'utf8').trim() || undefined;
  } catch {
    return undefined;
  }
}
