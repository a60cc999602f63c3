// The SSRF guard of every server-side request to an address a caller chose (MCP connection strings, OAuth
// endpoints found by discovery): http(s) only, no credentials in the URL, and no destination in a loopback,
// private, link-local (cloud metadata), CGNAT, multicast or otherwise non-public range unless the operator's
// `mcp.allowed_private_networks` admits it. `checkOutboundUrl` answers up front with a clear 400; the connector
// of `guardedAgent` applies the same rule to the address a connection really reaches, so a name that resolves
// to a public address at check time and a private one later (DNS rebinding), or a redirect, gets nowhere.
import { type LookupAddress, type LookupOptions, lookup } from 'node:dns';
import { BlockList, isIP } from 'node:net';
import { Agent, buildConnector } from 'undici';
import { GatewayError } from '../http/errors.ts';

/** Non-public IPv4 ranges, with the word a refusal uses. */
const V4_RANGES: Array<[string, number, string]> = [
  ['0.0.0.0', 8, 'unspecified'],
  ['10.0.0.0', 8, 'private'],
  ['100.64.0.0', 10, 'carrier-grade NAT'],
  ['127.0.0.0', 8, 'loopback'],
  ['169.254.0.0', 16, 'link-local'],
  ['172.16.0.0', 12, 'private'],
  ['192.0.0.0', 24, 'reserved'],
  ['192.0.2.0', 24, 'reserved'],
  ['192.88.99.0', 24, 'reserved'],
  ['192.168.0.0', 16, 'private'],
  ['198.18.0.0', 15, 'reserved'],
  ['198.51.100.0', 24, 'reserved'],
  ['203.0.113.0', 24, 'reserved'],
  ['224.0.0.0', 4, 'multicast'],
  ['240.0.0.0', 4, 'reserved'],
];
const V6_RANGES: Array<[string, number, string]> = [
  ['::', 128, 'unspecified'],
  ['::1', 128, 'loopback'],
  ['100::', 64, 'reserved'],
  ['2001:db8::', 32, 'reserved'],
  ['fc00::', 7, 'private'],
  ['fe80::', 10, 'link-local'],
  ['fec0::', 10, 'private'],
  ['ff00::', 8, 'multicast'],
];

function rangesOf(ranges: Array<[string, number, string]>, family: 'ipv4' | 'ipv6') {
  return ranges.map(([net, prefix, why]) => {
    const list = new BlockList();
    list.addSubnet(net, prefix, family);
    return { list, why };
  });
}
const BLOCKED_V4 = rangesOf(V4_RANGES, 'ipv4');
const BLOCKED_V6 = rangesOf(V6_RANGES, 'ipv6');

/** The IPv4 address an IPv6 one embeds (IPv4-mapped `::ffff:a.b.c.d`, IPv4-compatible, NAT64 `64:ff9b::/96`). */
export function embeddedIpv4(address: string): string | undefined {
  if (isIP(address) !== 6) return undefined;
  const words = expandIpv6(address);
  const head = words.slice(0, 6);
  const mapped = head.slice(0, 5).every((w) => w === 0) && (head[5] === 0xffff || head[5] === 0);
  const nat64 = head[0] === 0x64 && head[1] === 0xff9b && head.slice(2).every((w) => w === 0);
  // `::` and `::1` are IPv6's own unspecified and loopback, not IPv4-compatible addresses.
  if (!mapped && !nat64) return undefined;
  const hi = words[6] ?? 0;
  const lo = words[7] ?? 0;
  if (mapped && head[5] === 0 && hi === 0) return undefined;
  return `${hi >> 8}.${hi & 0xff}.${lo >> 8}.${lo & 0xff}`;
}

/** The eight 16-bit words of an IPv6 address (any textual form, dotted tail included). */
function expandIpv6(address: string): number[] {
  let text = address.toLowerCase().split('%')[0] ?? '';
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (dotted?.[1]) {
    const [a = 0, b = 0, c = 0, d = 0] = dotted[1].split('.').map(Number);
    text = `${text.slice(0, -dotted[1].length)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [left = '', right] = text.split('::');
  const l = left ? left.split(':') : [];
  const r = right !== undefined && right !== '' ? right.split(':') : [];
  const fill = right === undefined ? [] : Array<string>(8 - l.length - r.length).fill('0');
  return [...l, ...fill, ...r].map((w) => Number.parseInt(w, 16) || 0);
}

/** Why an address is not public (`loopback`, `private`, ...); undefined for a public address. */
export function nonPublicReason(address: string): string | undefined {
  const family = isIP(address);
  if (family === 0) return 'not an IP address';
  const v4 = family === 4 ? address : embeddedIpv4(address);
  if (v4 !== undefined) {
    return BLOCKED_V4.find((b) => b.list.check(v4, 'ipv4'))?.why;
  }
  return BLOCKED_V6.find((b) => b.list.check(address, 'ipv6'))?.why;
}

/** The operator's allow-list, parsed once: CIDR blocks and exact host names. */
export class OutboundAllowList {
  private readonly nets = new BlockList();
  private readonly hosts = new Set<string>();
  constructor(entries: readonly string[]) {
    for (const raw of entries) {
      const entry = raw.trim().toLowerCase();
      const slash = entry.lastIndexOf('/');
      const ip = slash >= 0 ? entry.slice(0, slash) : entry;
      const family = isIP(ip);
      if (family === 0) {
        this.hosts.add(entry.replace(/\.$/, ''));
        continue;
      }
      const max = family === 4 ? 32 : 128;
      const prefix = slash >= 0 ? Number(entry.slice(slash + 1)) : max;
      if (!Number.isInteger(prefix) || prefix < 0 || prefix > max) {
        throw new Error(`mcp.allowed_private_networks: bad CIDR block ${raw}`);
      }
      this.nets.addSubnet(ip, prefix, family === 4 ? 'ipv4' : 'ipv6');
      // An IPv4 block also admits the IPv4-mapped IPv6 forms of its addresses (checked as IPv4 below).
    }
  }
  admitsHost(host: string): boolean {
    return this.hosts.has(host.toLowerCase().replace(/\.$/, ''));
  }
  admitsAddress(address: string): boolean {
    const family = isIP(address);
    if (family === 0) return false;
    if (this.nets.check(address, family === 4 ? 'ipv4' : 'ipv6')) return true;
    const v4 = family === 6 ? embeddedIpv4(address) : undefined;
    return v4 !== undefined && this.nets.check(v4, 'ipv4');
  }
}

function allowListOf(list: readonly string[] | OutboundAllowList): OutboundAllowList {
  return list instanceof OutboundAllowList ? list : new OutboundAllowList(list);
}

/** A refusal of the guard: a 400 on the API; the message names the host, the address and why. */
export function outboundRefusal(message: string): GatewayError {
  return new GatewayError('invalid_request', message);
}

/** Refuses `address` (reached through `host`) unless it is public or admitted. */
function checkAddress(host: string, address: string, allow: OutboundAllowList): void {
  const why = nonPublicReason(address);
  if (why === undefined || allow.admitsAddress(address)) return;
  const via = host === address ? address : `${host} (${address})`;
  throw outboundRefusal(
    `refused to connect to ${via}: ${why} address; add it to mcp.allowed_private_networks in config.json to allow it`,
  );
}

export type Resolver = (host: string) => Promise<string[]>;

const systemResolver: Resolver = (host) =>
  new Promise((resolve, reject) =>
    lookup(host, { all: true, verbatim: true }, (err, addrs) =>
      err ? reject(err) : resolve(addrs.map((a) => a.address)),
    ),
  );

function bareHost(hostname: string): string {
  return hostname.startsWith('[') && hostname.endsWith(']') ? hostname.slice(1, -1) : hostname;
}

/**
 * Checks a URL a caller chose before the gateway requests it: scheme, credentials, and every address the host
 * resolves to. Throws a GatewayError (`invalid_request`, 400) with a clear message.
 */
export async function checkOutboundUrl(
  url: string,
  allowList: readonly string[] | OutboundAllowList,
  resolve: Resolver = systemResolver,
): Promise<void> {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw outboundRefusal(`${JSON.stringify(url.slice(0, 200))} is not a valid URL`);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    throw outboundRefusal(`URL scheme ${parsed.protocol.slice(0, -1)} is not allowed: use http or https`);
  }
  if (parsed.username || parsed.password) {
    throw outboundRefusal('credentials in the URL are not allowed: use headers or OAuth');
  }
  const allow = allowListOf(allowList);
  const host = bareHost(parsed.hostname);
  if (allow.admitsHost(host)) return;
  if (isIP(host)) return checkAddress(host, host, allow);
  let addresses: string[];
  try {
    addresses = await resolve(host);
  } catch (err) {
    throw outboundRefusal(`cannot resolve host ${host}: ${(err as NodeJS.ErrnoException).code ?? 'lookup failed'}`);
  }
  if (addresses.length === 0) throw outboundRefusal(`cannot resolve host ${host}: no address`);
  for (const address of addresses) checkAddress(host, address, allow);
}

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/** A `net.connect` lookup that resolves as usual and refuses a non-public address the allow-list does not admit. */
export function guardedLookup(allowList: readonly string[] | OutboundAllowList) {
  const allow = allowListOf(allowList);
  return (hostname: string, options: LookupOptions, callback: LookupCallback): void => {
    lookup(hostname, { ...options, all: true }, (err, addrs) => {
      if (err) return callback(err, []);
      // Only admitted addresses are dialled (`localhost` may be 127.0.0.1 and ::1 with only one admitted).
      let refusal: Error | undefined;
      const usable = allow.admitsHost(hostname)
        ? addrs
        : addrs.filter((a) => {
            try {
              checkAddress(hostname, a.address, allow);
              return true;
            } catch (e) {
              refusal ??= e as Error;
              return false;
            }
          });
      const first = usable[0];
      if (!first) {
        return callback(refusal ?? Object.assign(new Error(`no address for ${hostname}`), { code: 'ENOTFOUND' }), []);
      }
      if (options.all) return callback(null, usable);
      callback(null, first.address, first.family);
    });
  };
}

export interface GuardedAgentOptions {
  connectTimeoutMs?: number;
  /** Idle time allowed between body chunks; 0 for long-lived event streams (the caller bounds requests). */
  bodyTimeoutMs?: number;
  headersTimeoutMs?: number;
}

/**
 * An undici Agent whose every connection is checked where it is made: literal IP hosts (redirects included)
 * before connecting, names through `guardedLookup` at resolution time.
 */
export function guardedAgent(allowList: readonly string[] | OutboundAllowList, opts: GuardedAgentOptions = {}) {
  const allow = allowListOf(allowList);
  const timeout = opts.connectTimeoutMs ?? 10_000;
  const connector = buildConnector({ timeout, lookup: guardedLookup(allow) } as buildConnector.BuildOptions);
  const connect: buildConnector.connector = (options, callback) => {
    const host = bareHost(options.hostname);
    if (isIP(host) && !allow.admitsHost(host)) {
      try {
        checkAddress(host, host, allow);
      } catch (refusal) {
        callback(refusal as Error, null);
        return;
      }
    }
    connector(options, callback);
  };
  return new Agent({
    connect,
    bodyTimeout: opts.bodyTimeoutMs ?? 0,
    headersTimeout: opts.headersTimeoutMs ?? 0,
  });
}
