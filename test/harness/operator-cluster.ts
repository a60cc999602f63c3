// Everything the operator end-to-end tests run against: a real control plane with the chart applied (CRDs,
// RBAC), Postgres, Redis, a fake OpenAI upstream, operator processes authenticating with the operator
// ServiceAccount token, and gateway processes on the same Postgres and Redis.
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createOpenAIFake, type OpenAIFake } from '../fakes/openai.ts';
import { type GatewayProcess, startGatewayProcess } from './gateway-process.ts';
import { type ControlPlane, startControlPlane } from './kube.ts';
import { ensureKubeTools, execTool, type KubeTools, type ToolResult } from './kube-tools.ts';
import { type OperatorProcess, startOperatorProcess } from './operator-process.ts';
import { type PostgresServer, startPostgres } from './postgres.ts';
import { type RedisServer, startRedis } from './redis.ts';
import { waitFor } from './wait.ts';

export const NAMESPACE = 'model-gateway';
export const ENCRYPTION_SECRET = 'gateway-encryption-key';
export const ADMIN_KEY = 'k8s-admin-key-0123456789';

export interface OperatorCluster {
  cp: ControlPlane;
  tools: KubeTools;
  postgres: PostgresServer;
  redis: RedisServer;
  fake: OpenAIFake;
  operators: OperatorProcess[];
  gateways: GatewayProcess[];
  kubectl(...args: string[]): Promise<ToolResult>;
  /** kubectl apply of objects (written as a JSON List into the control plane's temp dir). */
  apply(name: string, objects: readonly object[]): Promise<ToolResult>;
  startOperator(identity: string): Promise<OperatorProcess>;
  stop(): Promise<void>;
}

let manifestSeq = 0;

export async function startOperatorCluster(opts: {
  operators: number;
  gateways: number;
  /** Extra environment of the operator processes (e.g. OPERATOR_MCP_ALLOWED_PRIVATE_NETWORKS). */
  operatorEnv?: Record<string, string>;
}): Promise<OperatorCluster> {
  const tools = await ensureKubeTools();
  const [cp, postgres, redis, fake] = await Promise.all([
    startControlPlane(),
    startPostgres(),
    startRedis(),
    createOpenAIFake().start(),
  ]);
  const kubectl = (...args: string[]) => execTool(tools.kubectl, args, { env: cp.toolEnv });
  const apply = async (name: string, objects: readonly object[]) => {
    const path = join(cp.dir, `${name}-${++manifestSeq}.json`);
    await writeFile(path, JSON.stringify({ apiVersion: 'v1', kind: 'List', items: objects }));
    return kubectl('apply', '-n', NAMESPACE, '-f', path);
  };
  must(await kubectl('create', 'namespace', NAMESPACE));
  // The chart as users install it: CRDs, the operator's ServiceAccount and its least-privilege Role.
  const rendered = must(
    await execTool(
      tools.helm,
      [
        'template',
        'mg',
        'charts/gateway',
        '-n',
        NAMESPACE,
        '--set',
        'postgres.existingSecret=pg',
        '--set',
        'redis.existingSecret=redis',
        '--set',
        'operator.serviceAccount.name=operator',
        '--set',
        `encryptionKey.secretName=${ENCRYPTION_SECRET}`,
      ],
      { env: cp.toolEnv },
    ),
  );
  const chartPath = join(cp.dir, 'chart.yaml');
  await writeFile(chartPath, rendered);
  must(await kubectl('apply', '-n', NAMESPACE, '-f', chartPath));
  const crds = ['providers', 'providerkeys', 'virtualkeys', 'mcpclients', 'budgets'].map(
    (p) => `crd/${p}.modelgateway.io`,
  );
  must(await kubectl('wait', '--for=condition=Established', '--timeout=60s', ...crds));

  const operatorEnv = {
    KUBECONFIG: cp.operatorKubeconfigPath,
    OPERATOR_NAMESPACE: NAMESPACE,
    DATABASE_URL: postgres.url,
    REDIS_URL: redis.url,
    OPERATOR_LEASE_NAME: 'mg-gateway-operator',
    OPERATOR_LEASE_DURATION_SECONDS: '3',
    OPERATOR_RESYNC_SECONDS: '20',
    ENCRYPTION_KEY_SECRET: ENCRYPTION_SECRET,
    ...opts.operatorEnv,
  };
  const operators: OperatorProcess[] = [];
  const startOperator = async (identity: string) => {
    const op = await startOperatorProcess(identity, operatorEnv);
    operators.push(op);
    return op;
  };
  for (let i = 0; i < opts.operators; i++) await startOperator(`operator-${i}`);
  // The gateways read the encryption key the operator created, as pods do through secretKeyRef.
  let encryptionKey = '';
  await waitFor(
    async () => {
      const r = await kubectl(
        'get',
        'secret',
        ENCRYPTION_SECRET,
        '-n',
        NAMESPACE,
        '-o',
        'jsonpath={.data.encryption-key}',
      );
      encryptionKey = r.code === 0 ? Buffer.from(r.stdout, 'base64').toString('utf8') : '';
      return encryptionKey !== '';
    },
    30_000,
    'the operator to create the encryption-key Secret',
  );
  const gateways = await Promise.all(
    Array.from({ length: opts.gateways }, () =>
      startGatewayProcess({
        DATABASE_URL: postgres.url,
        REDIS_URL: redis.url,
        GATEWAY_ENCRYPTION_KEY: encryptionKey,
        GATEWAY_ADMIN_API_KEY: ADMIN_KEY,
      }),
    ),
  );
  return {
    cp,
    tools,
    postgres,
    redis,
    fake,
    operators,
    gateways,
    kubectl,
    apply,
    startOperator,
    async stop() {
      await Promise.allSettled([...gateways.map((g) => g.stop()), ...operators.map((o) => o.stop())]);
      await Promise.allSettled([fake.stop(), redis.stop(), postgres.stop(), cp.stop()]);
    },
  };
}

function must(result: ToolResult): string {
  if (result.code !== 0) throw new Error(`command failed (${result.code}): ${result.stderr}`);
  return result.stdout;
}

export const API_VERSION = 'modelgateway.io/v1alpha1';

/** metadata of an object in the test namespace. */
export const meta = (name: string) => ({ name, namespace: NAMESPACE });

export interface ReadyCondition {
  status: string;
  reason: string;
  message: string;
}

/** The Ready condition of a resource, or undefined when it (or its status) does not exist yet. */
export async function readyCondition(
  c: OperatorCluster,
  kind: string,
  name: string,
): Promise<ReadyCondition | undefined> {
  const r = await c.kubectl('get', kind, name, '-n', NAMESPACE, '-o', 'json');
  if (r.code !== 0) return undefined;
  const obj = JSON.parse(r.stdout) as { status?: { conditions?: (ReadyCondition & { type: string })[] } };
  return obj.status?.conditions?.find((x) => x.type === 'Ready');
}
