import { describe, expect, it } from 'vitest';
import { readOperatorEnv } from '../src/env.ts';

const BASE = { DATABASE_URL: 'postgres://x@127.0.0.1/db', REDIS_URL: 'redis://127.0.0.1:6379' };

describe('readOperatorEnv', () => {
  it('refuses to start without Postgres or Redis, naming the variable and why', () => {
    expect(() => readOperatorEnv({ REDIS_URL: BASE.REDIS_URL })).toThrow(
      'DATABASE_URL: required: the operator writes to the Postgres the gateways read',
    );
    expect(() => readOperatorEnv({ DATABASE_URL: BASE.DATABASE_URL, REDIS_URL: '' })).toThrow(
      'REDIS_URL: required: change events reach the gateways through Redis',
    );
  });

  it('applies the defaults of docs/kubernetes.md', () => {
    const env = readOperatorEnv({ ...BASE, OPERATOR_NAMESPACE: 'mg', POD_NAME: 'op-0' });
    expect(env).toMatchObject({
      namespace: 'mg',
      identity: 'op-0',
      leaseName: 'model-gateway-operator',
      leaseDurationSeconds: 15,
      resyncMs: 60_000,
      workers: 8,
      healthPort: 8081,
      encryptionKeySecret: undefined,
      encryptionKeySecretKey: 'encryption-key',
      logLevel: 'info',
      mcpAllowedPrivateNetworks: [],
    });
  });

  it('reads the MCP OAuth allow-list as a comma-separated list', () => {
    const env = readOperatorEnv({ ...BASE, OPERATOR_MCP_ALLOWED_PRIVATE_NETWORKS: ' 10.0.0.0/8, auth.internal ,' });
    expect(env.mcpAllowedPrivateNetworks).toEqual(['10.0.0.0/8', 'auth.internal']);
    expect(() => readOperatorEnv({ ...BASE, OPERATOR_MCP_ALLOWED_PRIVATE_NETWORKS: 'x'.repeat(300) })).toThrow(
      /^OPERATOR_MCP_ALLOWED_PRIVATE_NETWORKS\.0: an entry longer than 256 characters/,
    );
  });

  it('refuses a lease shorter than 2 s or a bad log level', () => {
    expect(() => readOperatorEnv({ ...BASE, OPERATOR_LEASE_DURATION_SECONDS: '1' })).toThrow(
      /^OPERATOR_LEASE_DURATION_SECONDS: /,
    );
    expect(() => readOperatorEnv({ ...BASE, GATEWAY_LOG_LEVEL: 'loud' })).toThrow(/^GATEWAY_LOG_LEVEL: /);
  });

  it('reads the reconcile concurrency per kind, 1 to 64', () => {
    expect(readOperatorEnv({ ...BASE, OPERATOR_WORKERS: '16' }).workers).toBe(16);
    expect(() => readOperatorEnv({ ...BASE, OPERATOR_WORKERS: '0' })).toThrow(/^OPERATOR_WORKERS: /);
    expect(() => readOperatorEnv({ ...BASE, OPERATOR_WORKERS: '65' })).toThrow(/^OPERATOR_WORKERS: /);
  });
});
