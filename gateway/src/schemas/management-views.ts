// Answers of the management routes added for parity with the reference (issue 14): every provider key, the model
// catalog views, the outbound proxy and the pricing reload. Documentation only (the routes build the values).
import { z } from 'zod';
import { ProviderKeyView } from './api-views.ts';

export const AllKeysView = z
  .array(ProviderKeyView.extend({ provider: z.string() }).meta({ id: 'ProviderKeyWithProvider' }))
  .describe('every provider key, values redacted');

const Limit = (dflt: number) =>
  z.coerce.number().int().min(1).max(1000).optional().describe(`at most this many models (default ${dflt})`);

export const ModelsQuery = (dflt: number) =>
  z.object({
    query: z.string().max(256).optional().describe('part of the model name (case-insensitive)'),
    provider: z.string().max(64).optional(),
    keys: z.string().max(4096).optional().describe('comma-separated provider key ids: models one of them serves'),
    limit: Limit(dflt),
    unfiltered: z
      .enum(['true', 'false'])
      .optional()
      .describe('true: also the catalog’s models of the configured providers that no key’s allow-list covers'),
  });

const modelFields = {
  name: z.string(),
  provider: z.string(),
  accessible_by_keys: z.array(z.string()).describe('ids of the provider keys that serve it'),
};
export const ModelListView = z.strictObject({
  models: z.array(z.strictObject(modelFields)),
  total: z.int().describe('models that matched, before the limit'),
});
export const ModelDetailsView = z.strictObject({
  models: z.array(
    z.strictObject({
      ...modelFields,
      max_output_tokens: z.int().optional().describe('from the gateway’s model catalog, when known'),
      priced: z.boolean().describe('the catalog or a pricing override prices it'),
    }),
  ),
  total: z.int(),
});

export const BaseModelsQuery = z.object({
  query: z.string().max(256).optional(),
  provider: z.string().max(64).optional(),
  limit: z.coerce.number().int().min(1).max(10_000).optional(),
});
export const BaseModelsView = z.strictObject({
  models: z.array(
    z.strictObject({
      name: z.string(),
      provider: z.string(),
      max_output_tokens: z.int().optional(),
    }),
  ),
  total: z.int(),
});

export const ModelParametersQuery = z.object({
  model: z.string().max(512).optional().describe('`<provider>/<model>`: bounds that depend on the model'),
});
export const ModelParametersView = z.looseObject({
  parameters: z.record(z.string(), z.unknown()).describe('request parameter -> its JSON Schema'),
});

export const ProxyConfigView = z
  .strictObject({
    enabled: z.boolean(),
    type: z.enum(['http', 'socks5', 'tcp']),
    url: z.string(),
    username: z.string(),
    password: z.string().describe('redacted'),
    no_proxy: z.string(),
    timeout: z.int(),
    skip_tls_verify: z.boolean(),
    enable_for_inference: z.boolean(),
    enable_for_api: z.boolean(),
    enable_for_scim: z.boolean(),
  })
  .meta({ id: 'ProxyConfig' });

export const SuccessView = z.looseObject({ status: z.literal('success'), message: z.string() });
