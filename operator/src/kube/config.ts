// client-node 2.0 builds a new undici Agent for every API request (KubeConfig.applySecurityAuthentication), so each
// request opens its own TLS connection and handshake to the API server and the connection is never reused: with
// 1,000 VirtualKeys applied at once that was most of the operator's CPU. This KubeConfig hands every request the
// same dispatcher (keep-alive, HTTP/2 when the server offers it) while the TLS identity stays the same; a rotated
// CA or client certificate gets a new one. Headers (the bearer token, re-read as client-node does) stay per request.
import { createHash } from 'node:crypto';
import { bufferFromFileOrString, KubeConfig, type RequestContext } from '@kubernetes/client-node';

type Dispatcher = NonNullable<ReturnType<RequestContext['getDispatcher']>>;

export class PooledKubeConfig extends KubeConfig {
  private pooled: { identity: string; dispatcher: Dispatcher } | undefined;

  override async applySecurityAuthentication(context: RequestContext): Promise<void> {
    await super.applySecurityAuthentication(context);
    const created = context.getDispatcher();
    if (created === undefined) return;
    const identity = this.tlsIdentity();
    const pooled = this.pooled;
    if (pooled?.identity === identity) {
      // The Agent client-node just built never connected: it holds no socket or timer, so it is left to the
      // garbage collector (closing it costs an Error with a stack trace per request).
      context.setDispatcher(pooled.dispatcher);
      return;
    }
    this.pooled = { identity, dispatcher: created };
    // The old one finishes its requests in flight, then closes its connections.
    void pooled?.dispatcher.close().catch(() => undefined);
  }

  /** What the dispatcher's TLS settings are made of: the server, the proxy, and the CA and client certificate. */
  private tlsIdentity(): string {
    const cluster = this.getCurrentCluster();
    const user = this.getCurrentUser();
    const hash = createHash('sha256');
    const parts = [
      cluster?.server,
      cluster?.proxyUrl,
      String(cluster?.skipTLSVerify ?? false),
      cluster?.tlsServerName,
      bufferFromFileOrString(cluster?.caFile, cluster?.caData),
      bufferFromFileOrString(user?.certFile, user?.certData),
      bufferFromFileOrString(user?.keyFile, user?.keyData),
    ];
    for (const part of parts) hash.update(part ?? '-').update('\0');
    return hash.digest('hex');
  }
}
