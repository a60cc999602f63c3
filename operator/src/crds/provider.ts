// Provider: one upstream provider the gateway talks to, with its network settings.

import { providerCatalog } from '@model-gateway/gateway/providers';
import { z } from 'zod';
import { BaseStatus } from './common.ts';

const names = providerCatalog.names();
export const ProviderName = z.enum(names as [string, ...string[]]);

export const NetworkConfigSpec = z.strictObject({
  baseUrl: z
    .string()
    .max(2048)
    .regex(/^https?:\/\/[^\s]+$/, 'an http(s) URL')
    .optional()
    .describe('replaces the provider default endpoint'),
  defaultRequestTimeoutInSeconds: z.number().positive().max(3600).optional(),
  maxRetries: z.int().min(0).max(10).optional(),
  retryBackoffInitial: z.int().min(0).max(60_000).optional().describe('milliseconds'),
  retryBackoffMax: z.int().min(0).max(300_000).optional().describe('milliseconds'),
  extraHeaders: z.record(z.string().max(256), z.string().max(4096)).optional().meta({ maxProperties: 64 }),
});

export const ProviderSpec = z.strictObject({
  provider: ProviderName.meta({
    'x-kubernetes-validations': [{ rule: 'self == oldSelf', message: 'provider is immutable' }],
  }),
  networkConfig: NetworkConfigSpec.optional(),
});
export type ProviderSpec = z.infer<typeof ProviderSpec>;

export const ProviderStatus = z.object({ ...BaseStatus });
