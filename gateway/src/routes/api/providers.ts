// /api/providers and /api/providers/{provider}/keys: thin adapters over the provider service.
import type { FastifyInstance } from 'fastify';
import { KeyInput } from '../../config/schema.ts';
import { documented } from '../../http/openapi.ts';
import type { Runtime } from '../../runtime.ts';
import {
  Deleted,
  ProviderKeyList,
  ProviderKeyParams,
  ProviderKeyView,
  ProviderList,
  ProviderParams,
  ProviderView,
} from '../../schemas/api-views.ts';
import { AllKeysView } from '../../schemas/management-views.ts';
import { partialUpdate } from '../../state/services/partial.ts';
import { ProviderInput } from '../../state/services/providers.ts';
import { partialBody } from './governance/crud.ts';

type P = { Params: { provider: string } };
type K = { Params: { provider: string; key_id: string } };
const API = { source: 'api' } as const;

const doc = documented('Providers');
/** The views' fields that are not inputs (partial updates merge the rest with the body). */
const PROVENANCE = ['source', 'owner_ref', 'created_at', 'updated_at'];
const PROVIDER_MERGE = { readOnly: ['name', ...PROVENANCE] };
const KEY_MERGE = { readOnly: PROVENANCE };
const deleted = { 200: { description: 'Deleted', json: Deleted } };

/** Operations that take the provider or key just created (OpenAPI links). */
const named = { provider: '$response.body#/name' };
const providerLinks = Object.fromEntries(
  ['getProvider', 'updateProvider', 'deleteProvider', 'listProviderKeys', 'createProviderKey'].map((op) => [
    op,
    { operationId: op, parameters: named },
  ]),
);
const keyOf = { provider: '$request.path.provider', key_id: '$response.body#/id' };
const keyLinks = Object.fromEntries(
  ['getProviderKey', 'updateProviderKey', 'deleteProviderKey'].map((op) => [
    op,
    { operationId: op, parameters: keyOf },
  ]),
);

export function registerProviderRoutes(app: FastifyInstance, rt: Runtime): void {
  const svc = rt.state.providers;

  app.get(
    '/providers',
    doc({
      operationId: 'listProviders',
      summary: 'List providers',
      responses: { 200: { description: 'Every configured provider', json: ProviderList } },
    }),
    async () => {
      const providers = await svc.list();
      return { providers, total: providers.length };
    },
  );
  app.post(
    '/providers',
    doc({
      operationId: 'addProvider',
      summary: 'Add a provider',
      description: 'Keys are managed with /api/providers/{provider}/keys.',
      body: ProviderInput,
      responses: { 200: { description: 'The provider', json: ProviderView, links: providerLinks } },
      errors: [409],
    }),
    async (req) => svc.create(req.body, API),
  );
  app.get<P>(
    '/providers/:provider',
    doc({
      operationId: 'getProvider',
      summary: 'Get a provider',
      params: ProviderParams,
      responses: { 200: { description: 'The provider', json: ProviderView } },
    }),
    async (req) => svc.get(req.params.provider),
  );
  app.put<P>(
    '/providers/:provider',
    doc({
      operationId: 'updateProvider',
      summary: 'Update a provider’s settings',
      description: 'Changes the fields the body names (`network_config` is replaced whole) and keeps the others.',
      params: ProviderParams,
      body: partialBody(ProviderInput),
      responses: { 200: { description: 'The provider', json: ProviderView } },
      errors: [409],
    }),
    async (req) =>
      partialUpdate(
        () => svc.get(req.params.provider),
        (merged, opts) => svc.update(req.params.provider, merged, API, opts),
        req.body,
        PROVIDER_MERGE,
      ),
  );
  app.delete<P>(
    '/providers/:provider',
    doc({
      operationId: 'deleteProvider',
      summary: 'Delete a provider and its keys',
      params: ProviderParams,
      responses: deleted,
      errors: [409],
    }),
    async (req) => {
      await svc.delete(req.params.provider, API);
      return { deleted: req.params.provider };
    },
  );

  app.get(
    '/keys',
    doc({
      operationId: 'listKeys',
      summary: 'List every provider’s keys (values redacted)',
      responses: { 200: { description: 'Every key, with its provider', json: AllKeysView } },
    }),
    async () => svc.listAllKeys(),
  );
  app.get<P>(
    '/providers/:provider/keys',
    doc({
      operationId: 'listProviderKeys',
      summary: 'List a provider’s keys (values redacted)',
      params: ProviderParams,
      responses: { 200: { description: 'The provider’s keys', json: ProviderKeyList } },
    }),
    async (req) => {
      const keys = await svc.listKeys(req.params.provider);
      return { keys, total: keys.length };
    },
  );
  app.post<P>(
    '/providers/:provider/keys',
    doc({
      operationId: 'createProviderKey',
      summary: 'Add a key to a provider',
      params: ProviderParams,
      body: KeyInput,
      responses: { 200: { description: 'The key (value redacted)', json: ProviderKeyView, links: keyLinks } },
      errors: [409],
    }),
    async (req) => svc.addKey(req.params.provider, req.body, API),
  );
  app.get<K>(
    '/providers/:provider/keys/:key_id',
    doc({
      operationId: 'getProviderKey',
      summary: 'Get a provider key (value redacted)',
      params: ProviderKeyParams,
      responses: { 200: { description: 'The key', json: ProviderKeyView } },
    }),
    async (req) => svc.getKey(req.params.provider, req.params.key_id),
  );
  app.put<K>(
    '/providers/:provider/keys/:key_id',
    doc({
      operationId: 'updateProviderKey',
      summary: 'Update a provider key',
      description:
        'Changes the fields the body names and keeps the others; a secret omitted, sent back redacted or empty ' +
        'keeps the stored secret.',
      params: ProviderKeyParams,
      body: partialBody(KeyInput),
      responses: { 200: { description: 'The key (value redacted)', json: ProviderKeyView } },
      errors: [409],
    }),
    async (req) => {
      const { provider, key_id } = req.params;
      return partialUpdate(
        () => svc.getKey(provider, key_id),
        (merged, opts) => svc.updateKey(provider, key_id, merged, API, opts),
        req.body,
        KEY_MERGE,
      );
    },
  );
  app.delete<K>(
    '/providers/:provider/keys/:key_id',
    doc({
      operationId: 'deleteProviderKey',
      summary: 'Delete a provider key',
      params: ProviderKeyParams,
      responses: deleted,
      errors: [409],
    }),
    async (req) => {
      await svc.deleteKey(req.params.provider, req.params.key_id, API);
      return { deleted: req.params.key_id };
    },
  );
}
