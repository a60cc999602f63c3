// ProviderKey: one credential of a Provider. Values come from Secrets (secretKeyRef), never from the spec.
import { z } from 'zod';
import { allowListSet, BaseStatus, LocalObjectRef, SecretKeyRef } from './common.ts';

export const ProviderKeySpec = z
  .strictObject({
    providerRef: LocalObjectRef.describe('the Provider in the same namespace'),
    valueFrom: z.strictObject({ secretKeyRef: SecretKeyRef }).optional().describe('the API key'),
    models: allowListSet().optional().describe('models the key serves; empty denies all, ["*"] allows all'),
    weight: z.number().min(0).max(1_000_000).optional().describe('weighted selection among eligible keys; default 1'),
    aliases: z
      .record(z.string().min(1).max(256), z.string().min(1).max(1024))
      .optional()
      .meta({ maxProperties: 256 })
      .describe('model name -> provider identifier (deployment, inference profile ARN, fine-tune id)'),
    azure: z
      .strictObject({
        endpoint: z
          .string()
          .max(2048)
          .regex(/^https?:\/\/[^\s]+$/, 'an http(s) URL'),
        apiVersion: z.string().min(1).max(64).optional(),
      })
      .optional(),
    bedrock: z
      .strictObject({
        region: z.string().min(1).max(64),
        // Both or neither: without static keys the gateway pods use the AWS default credential chain (IRSA,
        // EKS Pod Identity, instance roles).
        accessKeySecretRef: SecretKeyRef.optional(),
        secretKeySecretRef: SecretKeyRef.optional(),
        sessionTokenSecretRef: SecretKeyRef.optional(),
      })
      .meta({
        'x-kubernetes-validations': [
          {
            rule: 'has(self.accessKeySecretRef) == has(self.secretKeySecretRef)',
            message:
              'set accessKeySecretRef and secretKeySecretRef together, or neither (the AWS default credential chain)',
          },
          {
            rule: '!has(self.sessionTokenSecretRef) || has(self.accessKeySecretRef)',
            message: 'sessionTokenSecretRef needs accessKeySecretRef and secretKeySecretRef',
          },
        ],
      })
      .optional(),
    vertex: z
      .strictObject({
        projectId: z.string().min(1).max(128),
        region: z.string().min(1).max(64),
        credentialsSecretRef: SecretKeyRef.optional().describe('service-account JSON'),
      })
      .optional(),
    replicate: z.strictObject({ useDeploymentsEndpoint: z.boolean().optional() }).optional(),
  })
  .meta({
    'x-kubernetes-validations': [
      {
        rule: '[has(self.azure), has(self.bedrock), has(self.vertex), has(self.replicate)].filter(x, x).size() <= 1',
        message: 'set at most one of azure, bedrock, vertex, replicate',
      },
    ],
  });
export type ProviderKeySpec = z.infer<typeof ProviderKeySpec>;

export const ProviderKeyStatus = z.object({
  ...BaseStatus,
  keyId: z.string().optional().describe('id of the synced provider key row'),
  provider: z.string().optional(),
});
