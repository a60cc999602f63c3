// The chart's telemetry values: the gen_ai Grafana dashboard as a ConfigMap for the Grafana sidecar (off by
// default), and the gateway pods' OTEL_* environment (tracing off without an endpoint). Rendered with helm; the
// dashboard's queries are checked against the gateway's real /metrics in test/e2e/telemetry-metrics.test.ts.
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { ensureKubeTools, execTool, type KubeTools, type ToolResult } from '../harness/kube-tools.ts';
import { findManifest, type Manifest, parseManifests } from '../harness/manifests.ts';

const chart = fileURLToPath(new URL('../../charts/gateway', import.meta.url));
const dashboardFile = fileURLToPath(new URL('../../charts/gateway/dashboards/model-gateway.json', import.meta.url));
const NS = 'model-gateway';
const REQUIRED = ['--set', 'postgres.existingSecret=pg', '--set', 'redis.existingSecret=redis'];

let tools: KubeTools;

beforeAll(async () => {
  tools = await ensureKubeTools();
});

function ok(result: ToolResult): string {
  expect(result.code, `${result.stderr}\n${result.stdout}`).toBe(0);
  return result.stdout;
}

const helm = (...args: string[]) => execTool(tools.helm, args);
const render = async (...args: string[]) =>
  parseManifests(ok(await helm('template', 'mg', chart, '--namespace', NS, ...REQUIRED, ...args)));

interface EnvVar {
  name: string;
  value?: string;
  valueFrom?: unknown;
}

function gatewayEnv(objects: Manifest[]): EnvVar[] {
  const d = findManifest(objects, 'Deployment', 'mg-gateway') as Manifest & {
    spec: { template: { spec: { containers: { env: EnvVar[] }[] } } };
  };
  return d.spec.template.spec.containers[0]!.env;
}

describe('Grafana dashboard ConfigMap', () => {
  it('is not rendered by default', async () => {
    const objects = await render();
    expect(objects.some((o) => o.kind === 'ConfigMap' && o.metadata.name === 'mg-gateway-dashboard')).toBe(false);
  });

  it('holds the dashboard JSON, labelled for the sidecar, in the chosen namespace and folder', async () => {
    const lint = ok(await helm('lint', '--strict', chart, ...REQUIRED, '--set', 'grafanaDashboard.enabled=true'));
    expect(lint).toContain('1 chart(s) linted, 0 chart(s) failed');
    const objects = await render(
      ...['--set', 'grafanaDashboard.enabled=true', '--set', 'grafanaDashboard.folder=AI gateways'],
      ...['--set', 'grafanaDashboard.label=dashboards', '--set', 'grafanaDashboard.labelValue=gateway'],
      ...['--set', 'grafanaDashboard.namespace=monitoring'],
    );
    const cm = findManifest(objects, 'ConfigMap', 'mg-gateway-dashboard') as Manifest & {
      data: Record<string, string>;
    };
    expect(cm.metadata.namespace).toBe('monitoring');
    expect(cm.metadata.labels).toMatchObject({ dashboards: 'gateway', 'app.kubernetes.io/instance': 'mg' });
    expect(cm.metadata.annotations).toEqual({ grafana_folder: 'AI gateways' });
    const shipped = JSON.parse(await readFile(dashboardFile, 'utf8')) as Record<string, unknown>;
    expect(JSON.parse(cm.data['model-gateway.json']!)).toEqual(shipped);
    expect(shipped).toMatchObject({ uid: 'model-gateway-genai' });
    const defaults = await render('--set', 'grafanaDashboard.enabled=true');
    const plain = findManifest(defaults, 'ConfigMap', 'mg-gateway-dashboard');
    expect(plain.metadata.namespace).toBe(NS);
    expect(plain.metadata.labels).toMatchObject({ grafana_dashboard: '1' });
    expect(plain.metadata.annotations).toBeUndefined();
  });

  it('refuses a label that is not a Kubernetes label name', async () => {
    const r = await helm(
      ...['template', 'mg', chart, ...REQUIRED, '--set', 'grafanaDashboard.enabled=true'],
      ...['--set', 'grafanaDashboard.label=not a label'],
    );
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain("at '/grafanaDashboard/label'");
  });
});

describe('OTEL_* environment of the gateway pods', () => {
  it('sets nothing without an endpoint (tracing off)', async () => {
    const env = gatewayEnv(await render('--set', 'gateway.otel.serviceName=gw'));
    expect(env.filter((e) => e.name.startsWith('OTEL_'))).toEqual([]);
  });

  it('sets the endpoint, protocol, service name, sampler and the headers from a Secret', async () => {
    const env = gatewayEnv(
      await render(
        ...['--set', 'gateway.otel.endpoint=http://otel-collector.observability:4318'],
        ...['--set', 'gateway.otel.serviceName=edge-gateway', '--set', 'gateway.otel.sampler=parentbased_traceidratio'],
        ...['--set-string', 'gateway.otel.samplerArg=0.1', '--set', 'gateway.otel.headersSecret.name=otel-auth'],
      ),
    );
    expect(env.filter((e) => e.name.startsWith('OTEL_'))).toEqual([
      { name: 'OTEL_EXPORTER_OTLP_ENDPOINT', value: 'http://otel-collector.observability:4318' },
      { name: 'OTEL_EXPORTER_OTLP_PROTOCOL', value: 'http/json' },
      { name: 'OTEL_SERVICE_NAME', value: 'edge-gateway' },
      { name: 'OTEL_TRACES_SAMPLER', value: 'parentbased_traceidratio' },
      { name: 'OTEL_TRACES_SAMPLER_ARG', value: '0.1' },
      { name: 'OTEL_EXPORTER_OTLP_HEADERS', valueFrom: { secretKeyRef: { name: 'otel-auth', key: 'headers' } } },
    ]);
  });

  it.each([
    [['--set', 'gateway.otel.sampler=sometimes'], "at '/gateway/otel/sampler'"],
    [['--set', 'gateway.otel.endpoint=collector:4318'], "at '/gateway/otel/endpoint'"],
    [['--set-string', 'gateway.otel.samplerArg=1.5'], "at '/gateway/otel/samplerArg'"],
  ])('refuses %j', async (args, message) => {
    const r = await helm('template', 'mg', chart, ...REQUIRED, ...args);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain(message);
  });
});
