// The dispatcher every upstream provider call goes through: direct connections, or the outbound proxy of
// `/api/proxy-config` (an HTTP(S) proxy through undici's ProxyAgent, or SOCKS5), switched at runtime when the
// setting changes on any pod. Requests already sent finish on the dispatcher they started on; the old proxy
// agent closes once they are done.
import { Agent, Dispatcher, ProxyAgent, Socks5ProxyAgent } from 'undici';

/** The proxy as the snapshot holds it (password opened). */
export interface OutboundProxy {
  type: 'http' | 'socks5';
  url: string;
  username?: string | undefined;
  password?: string | undefined;
  /** Hosts reached directly: `*`, `host`, `.suffix` / `*.suffix`, each optionally with `:port`. */
  no_proxy: readonly string[];
  /** Connecting to the proxy, in seconds. */
  timeout_seconds: number;
  /** Accept any certificate from an `https://` proxy (never the upstream's own certificate). */
  skip_tls_verify: boolean;
}

type AgentOptions = ConstructorParameters<typeof Agent>[0];

export class OutboundDispatcher extends Dispatcher {
  private readonly agentOptions: AgentOptions;
  private readonly direct: Agent;
  private proxy: { agent: Dispatcher; noProxy: readonly string[] } | undefined;

  constructor(agentOptions: AgentOptions) {
    super();
    this.agentOptions = agentOptions;
    this.direct = new Agent(agentOptions);
  }

  /** True while a proxy is in use. */
  get proxied(): boolean {
    return this.proxy !== undefined;
  }

  /** Switches to `p` (undefined: direct). The previous proxy agent closes after its requests finish. */
  setProxy(p: OutboundProxy | undefined): void {
    const old = this.proxy;
    this.proxy = p ? { agent: proxyAgent(p, this.agentOptions), noProxy: p.no_proxy } : undefined;
    void old?.agent.close().catch(() => undefined);
  }

  override dispatch(opts: Dispatcher.DispatchOptions, handler: Dispatcher.DispatchHandler): boolean {
    const p = this.proxy;
    const via = p && !bypassesProxy(String(opts.origin ?? ''), p.noProxy) ? p.agent : this.direct;
    return via.dispatch(opts, handler);
  }

  override close(): Promise<void>;
  override close(callback: () => void): void;
  override close(callback?: () => void): Promise<void> | undefined {
    const done = Promise.all([this.direct.close(), this.proxy?.agent.close()]).then(() => undefined);
    if (!callback) return done;
    done.then(callback, callback);
    return undefined;
  }

  override destroy(): Promise<void>;
  override destroy(err: Error | null): Promise<void>;
  override destroy(callback: () => void): void;
  override destroy(err: Error | null, callback: () => void): void;
  override destroy(a?: Error | null | (() => void), b?: () => void): Promise<void> | undefined {
    const err = typeof a === 'function' ? null : (a ?? null);
    const callback = typeof a === 'function' ? a : b;
    const done = Promise.all([this.direct.destroy(err), this.proxy?.agent.destroy(err)]).then(() => undefined);
    if (!callback) return done;
    done.then(callback, callback);
    return undefined;
  }
}

function proxyAgent(p: OutboundProxy, agentOptions: AgentOptions): Dispatcher {
  const connect = { timeout: p.timeout_seconds * 1000, ...(p.skip_tls_verify ? { rejectUnauthorized: false } : {}) };
  if (p.type === 'socks5') {
    // `connectTimeout` is undici's option for this agent (not in its type declarations): the proxy handshake.
    const options = { connectTimeout: connect.timeout };
    return new Socks5ProxyAgent(p.url, {
      ...options,
      ...(p.username !== undefined ? { username: p.username, password: p.password ?? '' } : {}),
    });
  }
  const token =
    p.username !== undefined
      ? `Basic ${Buffer.from(`${p.username}:${p.password ?? ''}`).toString('base64')}`
      : undefined;
  return new ProxyAgent({
    ...agentOptions,
    uri: p.url,
    ...(token ? { token } : {}),
    proxyTls: connect,
    connect: { timeout: connect.timeout },
  });
}

/** True when `origin` (`https://host:port`) is listed in `noProxy` (curl's NO_PROXY rules, without CIDR). */
export function bypassesProxy(origin: string, noProxy: readonly string[]): boolean {
  if (noProxy.length === 0) return false;
  let host: string;
  let port: string;
  try {
    const u = new URL(origin);
    host = u.hostname.replace(/^\[|\]$/g, '').toLowerCase();
    port = u.port || (u.protocol === 'https:' ? '443' : '80');
  } catch {
    return false;
  }
  for (const entry of noProxy) {
    if (entry === '*') return true;
    const m = /^(.*?)(?::(\d+))?$/.exec(entry);
    const name = (m?.[1] ?? entry).replace(/^\*/, '').replace(/^\[|\]$/g, '');
    if (m?.[2] !== undefined && m[2] !== port) continue;
    if (name.startsWith('.') ? host === name.slice(1) || host.endsWith(name) : host === name) return true;
  }
  return false;
}
