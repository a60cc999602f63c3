// Building blocks of the CRD schemas (zod, the one source for the generated CustomResourceDefinitions in
// crds/ and for the operator's parsing). Field names are camelCase, as Kubernetes users expect; the
// reconcilers map them onto the gateway's snake_case state inputs.
import { z } from 'zod';

export const GROUP = 'modelgateway.io';
export const VERSION = 'v1alpha1';
export const API_VERSION = `${GROUP}/${VERSION}`;
export const CATEGORY = 'modelgateway';

/** Kubernetes object names (DNS-1123 subdomain). */
export const ObjectName = z
  .string()
  .min(1)
  .max(253)
  .regex(/^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/, 'a lower-case DNS-1123 name');

/** A key of a Secret in the object's namespace. The value never appears in a spec or status. */
export const SecretKeyRef = z.strictObject({
  name: ObjectName.describe('Secret in the same namespace'),
  key: z
    .string()
    .min(1)
    .max(253)
    .regex(/^[-._a-zA-Z0-9]+$/, 'a Secret data key')
    .describe('key inside the Secret'),
});
export type SecretKeyRef = z.infer<typeof SecretKeyRef>;

export const LocalObjectRef = z.strictObject({ name: ObjectName });

const WILDCARD_ALONE = {
  rule: "!('*' in self) || size(self) == 1",
  message: '"*" must stand alone; it cannot be mixed with other values',
};

/**
 * An allow-list of the spec: a set (duplicates refused by the API server), `*` only alone, bounded.
 * Empty or omitted denies all; ["*"] allows all.
 */
export function allowListSet(maxItems = 1000, itemMaxLength = 256) {
  return z
    .array(z.string().min(1).max(itemMaxLength))
    .max(maxItems)
    .meta({ 'x-kubernetes-list-type': 'set', 'x-kubernetes-validations': [WILDCARD_ALONE] });
}

/** `<count><unit>`: m minute, h hour, d day, w week, M month, Y year (same rule as the REST API). */
export const ResetDuration = z
  .string()
  .max(8)
  .regex(/^[1-9][0-9]{0,3}[mhdwMY]$/, 'a count (1-9999) and a unit m, h, d, w, M or Y, like 30d or 1M');

export const BudgetSpec = z.strictObject({
  maxLimit: z.number().min(0).max(9_000_000).describe('USD'),
  resetDuration: ResetDuration,
});

const Limit = z.int().min(0).max(1e15);
export const RateLimitSpec = z
  .strictObject({
    requestMaxLimit: Limit.optional(),
    requestResetDuration: ResetDuration.optional(),
    tokenMaxLimit: Limit.optional(),
    tokenResetDuration: ResetDuration.optional(),
  })
  .meta({
    'x-kubernetes-validations': [
      {
        rule: '!has(self.requestMaxLimit) || has(self.requestResetDuration)',
        message: 'requestResetDuration is required with requestMaxLimit',
      },
      {
        rule: '!has(self.tokenMaxLimit) || has(self.tokenResetDuration)',
        message: 'tokenResetDuration is required with tokenMaxLimit',
      },
    ],
  });

/** metav1.Condition. */
export const Condition = z.object({
  type: z.string().max(316),
  status: z.enum(['True', 'False', 'Unknown']),
  observedGeneration: z.int().min(0).optional(),
  lastTransitionTime: z.string(),
  reason: z.string().max(1024),
  message: z.string().max(32768),
});
export type Condition = z.infer<typeof Condition>;

/** Status shared by every kind: the generation last reconciled and the Ready condition. */
export const BaseStatus = {
  observedGeneration: z.int().min(0).optional(),
  conditions: z
    .array(Condition)
    .max(8)
    .optional()
    .meta({ 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['type'] }),
};

/** Reasons of the Ready condition. */
export const Reason = {
  Ready: 'Ready',
  Reconciling: 'Reconciling',
  InvalidSpec: 'InvalidSpec',
  SecretNotFound: 'SecretNotFound',
  ReferenceNotFound: 'ReferenceNotFound',
  Conflict: 'Conflict',
  Deleting: 'Deleting',
  // MCPClient: the row is synced, but the gateway pods do not (yet) reach the server.
  Connecting: 'Connecting',
  ConnectionError: 'ConnectionError',
  AuthorizationPending: 'AuthorizationPending',
  AuthorizationFailed: 'AuthorizationFailed',
  Revoked: 'Revoked',
} as const;
export type Reason = (typeof Reason)[keyof typeof Reason];
