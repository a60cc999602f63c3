// Free loopback ports for throwaway servers: ask the kernel for one, then release it for the server to bind.
import { createServer } from 'node:net';

/** A TCP port free on 127.0.0.1 right now (the caller binds it soon after; retry on a rare race). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      if (address === null || typeof address === 'string') {
        server.close();
        reject(new Error('could not read the port of a loopback listener'));
        return;
      }
      const { port } = address;
      server.close(() => resolve(port));
    });
  });
}
