// Operator process: read the environment, make sure the encryption key exists, open the gateway's state, keep
// the informer caches warm, and reconcile while this replica holds the leader Lease.
import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { CoordinationV1Api } from '@kubernetes/client-node';
import { providerCatalog } from '@model-gateway/gateway/providers';
import { openState } from '@model-gateway/gateway/state';
import { pino } from 'pino';
import { errorMessage } from './controller/errors.ts';
import { LeaderElector } from './controller/lease.ts';
import { readOperatorEnv } from './env.ts';
import { KubeWriter } from './kube/client.ts';
import { PooledKubeConfig } from './kube/config.ts';
import { Manager } from './manager.ts';
import { attachMcpOAuth } from './mcp-oauth.ts';
import { createOperatorMetrics, type OperatorMetrics } from './metrics.ts';

async function main(): Promise<void> {
  const env = readOperatorEnv(process.env);
  const log = pino({ level: env.logLevel, base: { component: 'operator' } });
  const kc = new PooledKubeConfig();
  kc.loadFromDefault();
  const kube = new KubeWriter(kc, env.namespace);
  // Up first, so a slow start (encryption key, migrations, cache sync) is not mistaken for a dead process.
  let manager: Manager | undefined;
  const metrics = createOperatorMetrics();
  const health = await serveHealth(env.healthHost, env.healthPort, () => manager?.ready ?? false, metrics);
  // A TCP server that is listening reports an AddressInfo.
  log.info({ port: (health.address() as AddressInfo).port }, 'health and metrics listening');

  const encryptionKey = env.encryptionKeySecret
    ? await kube.ensureEncryptionKey(env.encryptionKeySecret, env.encryptionKeySecretKey, () =>
        randomBytes(32).toString('base64'),
      )
    : env.encryptionKey;
  if (!encryptionKey) log.warn({}, 'no encryption key: provider key values are stored unencrypted');

  const state = await openState({
    databaseUrl: env.databaseUrl,
    redisUrl: env.redisUrl,
    redisKeyPrefix: env.redisKeyPrefix,
    encryptionKey,
    catalog: providerCatalog,
    log,
  });
  // MCPClients with OAuth: their configuration rows are written here, everything else about OAuth runs in the pods.
  const mcpOAuth = attachMcpOAuth(state, log, env.mcpAllowedPrivateNetworks);
  manager = new Manager({
    kc,
    namespace: env.namespace,
    state,
    kube,
    log,
    resyncMs: env.resyncMs,
    workers: env.workers,
    metrics,
  });
  const elector = new LeaderElector({
    coordination: kc.makeApiClient(CoordinationV1Api),
    namespace: env.namespace,
    name: env.leaseName,
    identity: env.identity,
    leaseDurationSeconds: env.leaseDurationSeconds,
    renewDeadlineMs: Math.round(env.leaseDurationSeconds * 666),
    retryPeriodMs: Math.round(env.leaseDurationSeconds * 133),
    onStartedLeading: (signal) => {
      log.info({ identity: env.identity }, 'leading');
      return manager?.lead(signal);
    },
    onStoppedLeading: () => log.info({ identity: env.identity }, 'stopped leading'),
    log,
    metrics: metrics.leaderElection(env.leaseName),
  });
  await manager.start();
  log.info({ namespace: env.namespace, identity: env.identity }, 'caches synced; campaigning for the lease');
  elector.start();

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info({ signal }, 'stopping');
    await elector.stop().catch((err: unknown) => log.warn({ err: errorMessage(err) }, 'lease release failed'));
    manager?.stop();
    health.close();
    await mcpOAuth.close().catch(() => undefined);
    await state.close();
    process.exit(0);
  };
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));
}

/** `/healthz` (alive) and `/readyz` (caches synced) for the kubelet, `/metrics` for Prometheus. */
function serveHealth(host: string, port: number, ready: () => boolean, metrics: OperatorMetrics): Promise<Server> {
  const server = createServer((req, res) => {
    if (req.url === '/metrics') {
      metrics.registry.metrics().then(
        (text) => {
          res.writeHead(200, { 'content-type': metrics.registry.contentType });
          res.end(text);
        },
        () => {
          res.writeHead(500);
          res.end();
        },
      );
      return;
    }
    const ok = req.url === '/healthz' || (req.url === '/readyz' && ready());
    res.writeHead(ok ? 200 : req.url === '/readyz' ? 503 : 404, { 'content-type': 'text/plain' });
    res.end(ok ? 'ok' : 'not ready');
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve(server));
  });
}

main().catch((err: unknown) => {
  process.stderr.write(`operator failed to start: ${errorMessage(err)}\n`);
  process.exit(1);
});
