// The committed CRDs (crds/ and the chart's templates/crds.yaml) match the zod specs, and they are structural
// schemas that carry the admission rules of the spec (sets, the wildcard rule, bounds).
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parse, parseAllDocuments } from 'yaml';
import { z } from 'zod';
import {
  CHART_TEMPLATE,
  type Json,
  renderAll,
  renderChartTemplate,
  renderCrds,
  staleFiles,
  toStructural,
} from '../../src/crds/generate.ts';
import { CATEGORY, KINDS } from '../../src/crds/index.ts';

const root = fileURLToPath(new URL('../../..', import.meta.url));

type Node = { [key: string]: Json };

function isNode(value: unknown): value is Node {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function child(node: unknown, key: string): Node {
  const value = isNode(node) ? node[key] : undefined;
  if (!isNode(value)) throw new Error(`no object at ${key}`);
  return value;
}

/** Walks `a.b[].c` through properties and items of a schema. */
function schemaAt(schema: Node, path: string): Node {
  let node = schema;
  for (const part of path.split('.')) {
    node = child(child(node, 'properties'), part.replace('[]', ''));
    if (part.endsWith('[]')) node = child(node, 'items');
  }
  return node;
}

/** Every schema node below `schema` with its path. */
function* nodes(schema: Node, path = ''): Generator<[string, Node]> {
  yield [path, schema];
  const properties = schema['properties'];
  if (isNode(properties)) {
    for (const [name, value] of Object.entries(properties)) if (isNode(value)) yield* nodes(value, `${path}.${name}`);
  }
  for (const key of ['items', 'additionalProperties']) {
    const value = schema[key];
    if (isNode(value)) yield* nodes(value, `${path}${key === 'items' ? '[]' : '.*'}`);
  }
}

interface Committed {
  kind: string;
  crd: Node;
  version: Node;
  schema: Node;
}

async function committed(): Promise<Committed[]> {
  return Promise.all(
    renderCrds().map(async ({ file }) => {
      const crd: unknown = parse(await readFile(join(root, file), 'utf8'));
      if (!isNode(crd)) throw new Error(`${file} is not a YAML object`);
      const versions = child(crd, 'spec')['versions'];
      const version = Array.isArray(versions) ? versions[0] : undefined;
      if (!isNode(version)) throw new Error(`${file} has no version`);
      const kind = child(child(crd, 'spec'), 'names')['kind'];
      return { kind: String(kind), crd, version, schema: child(child(version, 'schema'), 'openAPIV3Schema') };
    }),
  );
}

const ALLOW_LISTS: Record<string, string[]> = {
  ProviderKey: ['spec.models'],
  VirtualKey: [
    'spec.providerConfigs[].allowedModels',
    'spec.providerConfigs[].providerKeyRefs',
    'spec.mcpConfigs[].toolsToExecute',
    'spec.mcpConfigs[].toolsToAutoExecute',
    'spec.allowedExtraHeaders',
  ],
  MCPClient: ['spec.toolsToExecute', 'spec.toolsToAutoExecute'],
};

describe('generated CRD files', () => {
  it('are up to date with the zod specs', async () => {
    for (const { file, yaml } of renderAll()) {
      expect(existsSync(join(root, file)), `${file} is missing: run make crds`).toBe(true);
      expect(await readFile(join(root, file), 'utf8'), `${file} is stale: run make crds`).toBe(yaml);
    }
    expect(await staleFiles(root, renderAll()), 'stale or orphaned files: run make crds').toEqual([]);
  });

  it('render deterministically, one file per kind', () => {
    expect(renderAll()).toEqual(renderAll());
    expect(renderCrds().map((f) => f.file)).toEqual(KINDS.map((k) => `crds/${k.plural}.modelgateway.io.yaml`));
  });
});

describe('CRD structure', () => {
  it('names each kind with listKind, short names and the modelgateway category', async () => {
    for (const { kind, crd } of await committed()) {
      const def = KINDS.find((k) => k.kind === kind);
      expect(def).toBeDefined();
      expect(crd).toMatchObject({
        apiVersion: 'apiextensions.k8s.io/v1',
        metadata: { name: `${def?.plural}.modelgateway.io` },
        spec: {
          group: 'modelgateway.io',
          scope: 'Namespaced',
          names: { kind, listKind: `${kind}List`, shortNames: def?.shortNames, categories: [CATEGORY] },
        },
      });
      expect(CATEGORY).toBe('modelgateway');
    }
  });

  it('serves one stored version with the status subresource and Ready/Reason/Age columns', async () => {
    for (const { kind, version } of await committed()) {
      expect(version).toMatchObject({ name: 'v1alpha1', served: true, storage: true, subresources: { status: {} } });
      const columns = version['additionalPrinterColumns'];
      expect(Array.isArray(columns)).toBe(true);
      const names = Array.isArray(columns) ? columns.map((c) => (isNode(c) ? c['name'] : null)) : [];
      const own = KINDS.find((k) => k.kind === kind)?.columns.map((c) => c.name) ?? [];
      expect(names).toEqual([...own, 'Ready', 'Reason', 'Age']);
      expect(Array.isArray(columns) ? columns.slice(-3) : []).toEqual([
        { name: 'Ready', type: 'string', jsonPath: '.status.conditions[?(@.type=="Ready")].status' },
        { name: 'Reason', type: 'string', jsonPath: '.status.conditions[?(@.type=="Ready")].reason' },
        { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
      ]);
    }
  });

  it('is structural: a type on every node, no additionalProperties: false, no $schema, no unsafe-integer bounds', async () => {
    for (const { kind, schema } of await committed()) {
      expect(schema['required']).toEqual(['spec']);
      expect(Object.keys(child(schema, 'properties'))).toEqual(['apiVersion', 'kind', 'metadata', 'spec', 'status']);
      expect(child(child(schema, 'properties'), 'metadata')).toEqual({ type: 'object' });
      for (const [path, node] of nodes(schema)) {
        const where = `${kind}${path}`;
        expect(typeof node['type'], where).toBe('string');
        expect(node['additionalProperties'], where).not.toBe(false);
        expect(Object.keys(node), where).not.toContain('$schema');
        for (const bound of ['minimum', 'maximum']) {
          expect(Math.abs(Number(node[bound] ?? 0)), where).toBeLessThan(Number.MAX_SAFE_INTEGER);
        }
        if (node['type'] === 'array') expect(node['maxItems'], `${where} needs maxItems`).toBeTypeOf('number');
      }
    }
  });

  it('makes every allow-list a bounded set with the wildcard rule', async () => {
    const crds = await committed();
    for (const [kind, paths] of Object.entries(ALLOW_LISTS)) {
      const schema = crds.find((c) => c.kind === kind)?.schema;
      if (schema === undefined) throw new Error(`no CRD for ${kind}`);
      for (const path of paths) {
        const list = schemaAt(schema, path);
        expect(list, `${kind}.${path}`).toMatchObject({
          type: 'array',
          items: { type: 'string', minLength: 1 },
          'x-kubernetes-list-type': 'set',
          'x-kubernetes-validations': [
            {
              rule: "!('*' in self) || size(self) == 1",
              message: '"*" must stand alone; it cannot be mixed with other values',
            },
          ],
        });
        expect(list['maxItems'], `${kind}.${path}`).toBeTypeOf('number');
      }
    }
  });

  it('keys provider configs and MCP configs as list maps, and conditions by type', async () => {
    const crds = await committed();
    const vk = crds.find((c) => c.kind === 'VirtualKey')?.schema;
    if (vk === undefined) throw new Error('no VirtualKey CRD');
    expect(schemaAt(vk, 'spec.providerConfigs')['x-kubernetes-list-map-keys']).toEqual(['provider']);
    expect(schemaAt(vk, 'spec.mcpConfigs')['x-kubernetes-list-map-keys']).toEqual(['mcpClientName']);
    for (const { schema } of crds) {
      expect(schemaAt(schema, 'status.conditions')).toMatchObject({
        'x-kubernetes-list-type': 'map',
        'x-kubernetes-list-map-keys': ['type'],
      });
    }
  });
});

describe('chart template', () => {
  it('wraps every CRD in crds.enabled (external mode), keeps it on uninstall, and leaves no template action in the content', async () => {
    const text = await readFile(join(root, CHART_TEMPLATE), 'utf8');
    expect(text).toBe(renderChartTemplate().yaml);
    const lines = text.split('\n').filter((line) => line.includes('{{'));
    expect(lines).toEqual(['{{- if and .Values.crds.enabled (include "gateway.external" .) }}', '{{- end }}']);
    const body = text.slice(text.indexOf('}}') + 2, text.lastIndexOf('{{'));
    const documents = parseAllDocuments(body).map((d) => d.toJS({ maxAliasCount: 0 }));
    const standalone = await committed();
    expect(documents).toHaveLength(standalone.length);
    documents.forEach((document, i) => {
      const { crd } = standalone[i] ?? {};
      expect(document).toEqual({
        ...crd,
        metadata: { ...child(crd, 'metadata'), annotations: { 'helm.sh/resource-policy': 'keep' } },
      });
    });
  });
});

describe('toStructural', () => {
  it('refuses schema constructs it cannot map instead of dropping them', () => {
    const union = z.toJSONSchema(z.object({ a: z.union([z.string(), z.number()]) }), { target: 'openapi-3.0' });
    expect(() => toStructural(union)).toThrow('$.a: "anyOf" has no structural equivalent');
  });

  it('drops only the implicit integer bounds and maps additionalProperties onto pruning rules', () => {
    const schema = z.strictObject({
      count: z.int(),
      limit: z.int().min(1).max(1e15),
      labels: z.record(z.string(), z.string()),
      free: z.record(z.string(), z.unknown()),
    });
    const structural = toStructural(z.toJSONSchema(schema, { target: 'openapi-3.0', io: 'input' }));
    expect(structural).toEqual({
      type: 'object',
      required: ['count', 'limit', 'labels', 'free'],
      properties: {
        count: { type: 'integer' },
        limit: { type: 'integer', minimum: 1, maximum: 1e15 },
        labels: { type: 'object', additionalProperties: { type: 'string' } },
        free: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
      },
    });
  });
});
