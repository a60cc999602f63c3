import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fetch } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  checkOutboundUrl,
  embeddedIpv4,
  guardedAgent,
  nonPublicReason,
  OutboundAllowList,
} from '../../src/mcp/ssrf.ts';

const resolveTo =
  (...addrs: string[]) =>
  async () =>
    addrs;

describe('nonPublicReason', () => {
  it.each([
    ['127.0.0.1', 'loopback'],
    ['127.255.0.9', 'loopback'],
    ['10.1.2.3', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['192.168.1.1', 'private'],
    ['169.254.169.254', 'link-local'],
    ['0.0.0.0', 'unspecified'],
    ['100.64.0.1', 'carrier-grade NAT'],
    ['224.0.0.1', 'multicast'],
    ['255.255.255.255', 'reserved'],
    ['::1', 'loopback'],
    ['::', 'unspecified'],
    ['fc00::1', 'private'],
    ['fd12:3456::1', 'private'],
    ['fe80::1', 'link-local'],
    ['ff02::1', 'multicast'],
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:7f00:1', 'loopback'],
    ['::ffff:169.254.169.254', 'link-local'],
    ['::ffff:10.0.0.1', 'private'],
    ['64:ff9b::a9fe:a9fe', 'link-local'],
  ])('%s is %s', (address, why) => {
    expect(nonPublicReason(address)).toBe(why);
  });

  it.each(['8.8.8.8', '1.1.1.1', '172.32.0.1', '100.128.0.1', '2606:4700:4700::1111', '::ffff:8.8.8.8'])(
    '%s is public',
    (address) => {
      expect(nonPublicReason(address)).toBeUndefined();
    },
  );

  it('reads the IPv4 address inside IPv4-mapped and NAT64 forms', () => {
    expect(embeddedIpv4('::ffff:1.2.3.4')).toBe('1.2.3.4');
    expect(embeddedIpv4('::ffff:0102:0304')).toBe('1.2.3.4');
    expect(embeddedIpv4('64:ff9b::0102:0304')).toBe('1.2.3.4');
    expect(embeddedIpv4('::1')).toBeUndefined();
    expect(embeddedIpv4('2001:db8::1')).toBeUndefined();
  });
});

describe('checkOutboundUrl', () => {
  it('admits a public host', async () => {
    await expect(checkOutboundUrl('https://tools.example.com/mcp', [], resolveTo('93.184.216.34'))).resolves.toBe(
      undefined,
    );
  });

  it.each([
    ['ftp://example.com/x', /scheme ftp is not allowed/],
    ['file:///etc/passwd', /scheme file is not allowed/],
    ['not a url', /is not a valid URL/],
    ['https://user:pw@example.com/mcp', /credentials in the URL/],
    ['http://127.0.0.1:8080/mcp', /refused to connect to 127\.0\.0\.1: loopback address/],
    ['http://[::1]:8080/mcp', /::1: loopback/],
    ['http://169.254.169.254/latest/meta-data', /link-local/],
    ['http://[::ffff:169.254.169.254]/', /link-local/],
    ['http://10.0.0.5/mcp', /private/],
  ])('refuses %s', async (url, message) => {
    const err = await checkOutboundUrl(url, [], resolveTo('93.184.216.34')).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'invalid_request', status: 400 });
    expect((err as Error).message).toMatch(message);
  });

  it('refuses a name when any of its addresses is not public', async () => {
    await expect(
      checkOutboundUrl('http://mixed.example.com/', [], resolveTo('93.184.216.34', '10.0.0.1')),
    ).rejects.toThrow(/mixed\.example\.com \(10\.0\.0\.1\): private address/);
  });

  it('refuses a name that does not resolve, with a clear message', async () => {
    const fail = async () => {
      throw Object.assign(new Error('nope'), { code: 'ENOTFOUND' });
    };
    await expect(checkOutboundUrl('http://nowhere.invalid/', [], fail)).rejects.toThrow(
      /cannot resolve host nowhere\.invalid: ENOTFOUND/,
    );
  });

  it('admits what the allow-list names: CIDR blocks, exact hosts, IPv4 blocks for mapped forms', async () => {
    await expect(checkOutboundUrl('http://127.0.0.1:1/', ['127.0.0.0/8'])).resolves.toBeUndefined();
    await expect(checkOutboundUrl('http://[::ffff:127.0.0.1]:1/', ['127.0.0.1/32'])).resolves.toBeUndefined();
    await expect(checkOutboundUrl('http://[::1]:1/', ['::1/128'])).resolves.toBeUndefined();
    await expect(
      checkOutboundUrl('http://mcp.internal/', ['mcp.internal'], resolveTo('10.0.0.7')),
    ).resolves.toBeUndefined();
    await expect(
      checkOutboundUrl('http://other.internal/', ['10.0.0.0/24'], resolveTo('10.0.0.7')),
    ).resolves.toBeUndefined();
    await expect(checkOutboundUrl('http://other.internal/', ['10.0.0.0/24'], resolveTo('10.0.1.7'))).rejects.toThrow(
      /private/,
    );
    await expect(
      checkOutboundUrl('http://mcp.internal.evil/', ['mcp.internal'], resolveTo('10.0.0.7')),
    ).rejects.toThrow(/private/);
  });

  it('refuses a malformed allow-list entry', () => {
    expect(() => new OutboundAllowList(['10.0.0.0/33'])).toThrow(/bad CIDR/);
  });
});

describe('guardedAgent (checked at connect time)', () => {
  const server = createServer((_req, res) => res.end('reached'));
  let port = 0;
  beforeAll(async () => {
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(() => new Promise<void>((r) => server.close(() => r())));

  it('refuses a literal loopback address and a name resolving to one', async () => {
    const agent = guardedAgent([]);
    for (const url of [`http://127.0.0.1:${port}/`, `http://localhost:${port}/`]) {
      const err = await fetch(url, { dispatcher: agent }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(Error);
      expect(String((err as Error & { cause?: unknown }).cause)).toMatch(/refused to connect to .*loopback/);
    }
    await agent.close();
  });

  it('refuses a redirect to a private address', async () => {
    const redirect = createServer((_req, res) => res.writeHead(302, { location: `http://127.0.0.1:${port}/` }).end());
    await new Promise<void>((r) => redirect.listen(0, '127.0.0.2', r));
    const rport = (redirect.address() as AddressInfo).port;
    const agent = guardedAgent(['127.0.0.2/32']);
    const err = await fetch(`http://127.0.0.2:${rport}/`, { dispatcher: agent }).catch((e: unknown) => e);
    expect(String((err as Error & { cause?: unknown }).cause)).toMatch(/loopback/);
    await agent.close();
    await new Promise<void>((r) => redirect.close(() => r()));
  });

  it('connects where the allow-list admits', async () => {
    const agent = guardedAgent(['127.0.0.1/32']);
    const res = await fetch(`http://localhost:${port}/`, { dispatcher: agent });
    expect(await res.text()).toBe('reached');
    await agent.close();
  });
});
