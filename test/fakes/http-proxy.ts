// A forward HTTP proxy (RFC 9112 absolute-form requests, and CONNECT tunnels) on a loopback port, standing in
// for a corporate egress proxy: it records what passed through it and the Proxy-Authorization it was sent, and
// can require credentials (407 otherwise).
import { createServer, type IncomingMessage, request, type Server } from 'node:http';
import { type AddressInfo, connect, createServer as createNetServer, type Socket } from 'node:net';

export interface ProxiedRequest {
  method: string;
  /** The absolute target (`http://host:port/path`) or, for CONNECT, `host:port`. */
  target: string;
  proxyAuthorization: string | undefined;
}

export interface HttpProxyFake {
  url: string;
  seen: ProxiedRequest[];
  stop(): Promise<void>;
}

export async function startHttpProxy(opts: { requireAuth?: string } = {}): Promise<HttpProxyFake> {
  const seen: ProxiedRequest[] = [];
  const sockets = new Set<Socket>();
  const allowed = (req: IncomingMessage) =>
    opts.requireAuth === undefined || req.headers['proxy-authorization'] === opts.requireAuth;
  const server: Server = createServer((req, res) => {
    seen.push({
      method: req.method ?? '',
      target: req.url ?? '',
      proxyAuthorization: req.headers['proxy-authorization'],
    });
    if (!allowed(req)) {
      res.writeHead(407, { 'proxy-authenticate': 'Basic realm="test"' }).end();
      return;
    }
    const target = new URL(req.url ?? '/');
    const headers = { ...req.headers };
    delete headers['proxy-authorization'];
    delete headers['proxy-connection'];
    const upstream = request(
      {
        host: target.hostname,
        port: target.port,
        path: `${target.pathname}${target.search}`,
        method: req.method,
        headers,
      },
      (up) => {
        res.writeHead(up.statusCode ?? 502, up.headers);
        up.pipe(res);
      },
    );
    upstream.on('error', () => res.destroy());
    req.pipe(upstream);
  });
  server.on('connect', (req: IncomingMessage, client: Socket, head: Buffer) => {
    seen.push({ method: 'CONNECT', target: req.url ?? '', proxyAuthorization: req.headers['proxy-authorization'] });
    if (!allowed(req)) {
      client.end('HTTP/1.1 407 Proxy Authentication Required\r\n\r\n');
      return;
    }
    const [host, port] = (req.url ?? '').split(':');
    const up = connect(Number(port), host ?? '127.0.0.1', () => {
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      up.write(head);
      up.pipe(client);
      client.pipe(up);
    });
    up.on('error', () => client.destroy());
    client.on('error', () => up.destroy());
  });
  server.on('connection', (s: Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    seen,
    async stop() {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** A SOCKS5 proxy (RFC 1928, CONNECT only) with username/password authentication (RFC 1929). */
export async function startSocks5Proxy(opts: { username: string; password: string }): Promise<HttpProxyFake> {
  const seen: ProxiedRequest[] = [];
  const sockets = new Set<Socket>();
  const server = createNetServer((client) => {
    sockets.add(client);
    client.on('close', () => sockets.delete(client));
    client.on('error', () => client.destroy());
    let buf = Buffer.alloc(0);
    let stage: 'greeting' | 'auth' | 'request' | 'piping' = 'greeting';
    let user = '';
    client.on('data', function onData(chunk: Buffer) {
      if (stage === 'piping') return;
      buf = Buffer.concat([buf, chunk]);
      if (stage === 'greeting' && buf.length >= 2 && buf.length >= 2 + (buf[1] ?? 0)) {
        const methods = [...buf.subarray(2, 2 + (buf[1] ?? 0))];
        buf = buf.subarray(2 + (buf[1] ?? 0));
        if (!methods.includes(0x02)) {
          client.end(Buffer.from([0x05, 0xff]));
          return;
        }
        client.write(Buffer.from([0x05, 0x02]));
        stage = 'auth';
      }
      if (stage === 'auth' && buf.length >= 2) {
        const ulen = buf[1] ?? 0;
        if (buf.length < 3 + ulen) return;
        const plen = buf[2 + ulen] ?? 0;
        if (buf.length < 3 + ulen + plen) return;
        user = buf.subarray(2, 2 + ulen).toString();
        const pass = buf.subarray(3 + ulen, 3 + ulen + plen).toString();
        buf = buf.subarray(3 + ulen + plen);
        const ok = user === opts.username && pass === opts.password;
        client.write(Buffer.from([0x01, ok ? 0x00 : 0x01]));
        if (!ok) {
          client.end();
          return;
        }
        stage = 'request';
      }
      if (stage === 'request' && buf.length >= 5) {
        const atyp = buf[3];
        let host: string;
        let at: number;
        if (atyp === 0x01) {
          if (buf.length < 10) return;
          host = [...buf.subarray(4, 8)].join('.');
          at = 8;
        } else if (atyp === 0x03) {
          const len = buf[4] ?? 0;
          if (buf.length < 7 + len) return;
          host = buf.subarray(5, 5 + len).toString();
          at = 5 + len;
        } else {
          client.end(Buffer.from([0x05, 0x08, 0x00, 0x01, 0, 0, 0, 0, 0, 0]));
          return;
        }
        const port = buf.readUInt16BE(at);
        const rest = buf.subarray(at + 2);
        stage = 'piping';
        client.off('data', onData);
        seen.push({ method: 'CONNECT', target: `${host}:${port}`, proxyAuthorization: user });
        const up = connect(port, host, () => {
          client.write(Buffer.from([0x05, 0x00, 0x00, 0x01, 0, 0, 0, 0, 0, 0]));
          if (rest.length > 0) up.write(rest);
          up.pipe(client);
          client.pipe(up);
        });
        up.on('error', () => client.destroy());
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `socks5://127.0.0.1:${port}`,
    seen,
    async stop() {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
