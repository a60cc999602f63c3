// MCPClient: the resource is validated (its Secrets must exist) and reported; the gateway does not serve MCP
// clients yet, so Ready stays False with reason NotSupported until its reconciler lands with MCP support.
import { Reason } from '../crds/common.ts';
import { MCPClientSpec } from '../crds/mcp-client.ts';
import type { ReadyOutcome } from '../status.ts';
import { type KindReconciler, notReady, parseSpec } from './outcome.ts';
import { readSecretKey } from './secrets.ts';

export const mcpClientReconciler: KindReconciler = {
  kind: 'MCPClient',
  async apply(obj, ctx): Promise<ReadyOutcome> {
    const parsed = parseSpec(MCPClientSpec, obj);
    if (!parsed.ok) return parsed.outcome;
    const spec = parsed.spec;
    const clientSecret = spec.oauth?.clientSecretRef;
    if (clientSecret) {
      const read = readSecretKey(ctx.caches.secrets, clientSecret);
      if (!read.ok) return notReady(Reason.SecretNotFound, read.message);
    }
    const headers = spec.headersFrom?.secretRef.name;
    if (headers && !ctx.caches.secrets.get(headers))
      return notReady(Reason.SecretNotFound, `Secret ${headers} not found`);
    return notReady(
      Reason.NotSupported,
      'the spec is valid, but this gateway version does not connect MCP clients yet; the resource is kept as is',
    );
  },
};
