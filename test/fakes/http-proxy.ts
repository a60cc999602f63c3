// A forward HTTP proxy (RFC 9112 absolute-form requests, and CONNECT tunnels) on a loopback port, standing in
// for a corporate egress proxy: it records what passed through it and the Proxy-Authorization it was sent, and
// can require credentials (407 otherwise).
import { createServer, type IncomingMessage, request, type Server } from 'node:http';
import { type AddressInfo, connect, type Socket } from 'node:net';

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
