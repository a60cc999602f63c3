// PooledKubeConfig against a real TLS server: API calls share the dispatcher's few kept-alive connections
// (client-node's own KubeConfig opens one per call), the bearer token still goes with every call, and a new CA gets a new connection.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PooledKubeConfig } from '../../src/kube/config.ts';

let server: Server;
let url = '';
let ca = '';
let connections = 0;
const tokens: (string | undefined)[] = [];

/** A self-signed certificate for 127.0.0.1 (openssl), PEM key and certificate. */
function selfSigned(): { key: string; cert: string } {
  const dir = mkdtempSync(join(tmpdir(), 'op-tls-'));
  try {
    execFileSync('openssl', [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-days',
      '1',
      '-subj',
      '/CN=127.0.0.1',
      '-addext',
      'subjectAltName=IP:127.0.0.1',
      '-keyout',
      join(dir, 'key.pem'),
      '-out',
      join(dir, 'cert.pem'),
    ]);
    return { key: readFileSync(join(dir, 'key.pem'), 'utf8'), cert: readFileSync(join(dir, 'cert.pem'), 'utf8') };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

beforeAll(async () => {
  const tls = selfSigned();
  ca = tls.cert;
  server = createServer({ key: tls.key, cert: tls.cert }, (req, res) => {
    tokens.push(req.headers.authorization);
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 's', namespace: 'ns' } }));
  });
  server.on('secureConnection', () => connections++);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `https://127.0.0.1:${(server.address() as AddressInfo).port}`; // a TCP server reports an AddressInfo
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

function load<T extends KubeConfig>(kc: T, token: string, caData = ca): T {
  kc.loadFromOptions({
    clusters: [{ name: 'c', server: url, caData: Buffer.from(caData).toString('base64') }],
    users: [{ name: 'u', token }],
    contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
    currentContext: 'x',
  });
  return kc;
}

async function calls(kc: KubeConfig, n: number): Promise<number> {
  const before = connections;
  const api = kc.makeApiClient(CoreV1Api);
  for (let i = 0; i < n; i++) await api.readNamespacedSecret({ name: 's', namespace: 'ns' });
  return connections - before;
}

describe('PooledKubeConfig', () => {
  it('sends API calls over kept-alive TLS connections, each with the bearer token', async () => {
    tokens.length = 0;
    // undici may open a second connection while the first answer's body is still being read; never one per call.
    expect(await calls(load(new PooledKubeConfig(), 'tok-1'), 8)).toBeLessThanOrEqual(2);
    expect(tokens).toEqual(Array(8).fill('Bearer tok-1'));
  });

  it('is needed: client-node KubeConfig opens a connection per call', async () => {
    expect(await calls(load(new KubeConfig(), 'tok-2'), 4)).toBe(4);
  });

  it('opens a new connection when the CA changes', async () => {
    const kc = load(new PooledKubeConfig(), 'tok-3');
    expect(await calls(kc, 4)).toBeGreaterThan(0);
    expect(await calls(kc, 4)).toBe(0);
    // The same certificate with a trailing newline: other bytes, so another TLS identity.
    const cluster = kc.clusters[0];
    if (!cluster) throw new Error('no cluster');
    kc.clusters[0] = { ...cluster, caData: Buffer.from(`${ca}\n`).toString('base64') };
    expect(await calls(kc, 4)).toBeGreaterThan(0);
  });
});
