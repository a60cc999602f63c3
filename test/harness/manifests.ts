// Parses what `helm template` prints (multi-document YAML) into Kubernetes objects for assertions.
import { parseAllDocuments } from 'yaml';

export interface Manifest {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  [field: string]: unknown;
}

function isManifest(value: unknown): value is Manifest {
  if (typeof value !== 'object' || value === null) return false;
  if (!('apiVersion' in value) || typeof value.apiVersion !== 'string') return false;
  if (!('kind' in value) || typeof value.kind !== 'string') return false;
  if (!('metadata' in value) || typeof value.metadata !== 'object' || value.metadata === null) return false;
  return 'name' in value.metadata && typeof value.metadata.name === 'string';
}

/** Every non-empty document of `text`; throws on a YAML error or a document that is not a Kubernetes object. */
export function parseManifests(text: string): Manifest[] {
  const objects: Manifest[] = [];
  for (const doc of parseAllDocuments(text)) {
    if (doc.errors.length > 0) throw new Error(`invalid YAML: ${doc.errors.map((e) => e.message).join('; ')}`);
    const value: unknown = doc.toJS();
    if (value === null || value === undefined) continue;
    if (!isManifest(value)) throw new Error(`not a Kubernetes object: ${JSON.stringify(value).slice(0, 200)}`);
    objects.push(value);
  }
  return objects;
}

/**
 * The objects helm rendered from each template file, keyed by its `# Source: <chart>/<path>` comment. A template
 * that printed only comments maps to an empty list.
 */
export function manifestsBySource(text: string): Map<string, Manifest[]> {
  const bySource = new Map<string, Manifest[]>();
  for (const chunk of text.split(/^---$/m)) {
    const source = /^# Source: [^/]+\/(.+)$/m.exec(chunk)?.[1];
    if (source === undefined) continue;
    bySource.set(source, [...(bySource.get(source) ?? []), ...parseManifests(chunk)]);
  }
  return bySource;
}

/** The one object of that kind and name; fails the test with the list of what was rendered otherwise. */
export function findManifest(objects: readonly Manifest[], kind: string, name: string): Manifest {
  const found = objects.filter((o) => o.kind === kind && o.metadata.name === name);
  if (found.length !== 1 || found[0] === undefined) {
    const all = objects.map((o) => `${o.kind}/${o.metadata.name}`).join(', ');
    throw new Error(`expected one ${kind}/${name}, found ${found.length} among: ${all}`);
  }
  return found[0];
}

/** A namespaced CRD that accepts any content, for kinds a test cluster lacks (e.g. the Prometheus Operator's). */
export function schemalessCrd(group: string, version: string, kind: string, plural: string): Manifest {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${plural}.${group}` },
    spec: {
      group,
      scope: 'Namespaced',
      names: { plural, singular: kind.toLowerCase(), kind },
      versions: [
        {
          name: version,
          served: true,
          storage: true,
          schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } },
        },
      ],
    },
  };
}
