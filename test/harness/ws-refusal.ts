// The HTTP answer with which a server refused a WebSocket upgrade: its status and JSON body. Rejects if the
// upgrade is accepted (the test expected a refusal).
import WebSocket from 'ws';

export interface UpgradeRefusal {
  code: number;
  body: Record<string, unknown>;
}

export function upgradeRefusal(
  url: string,
  options: { headers?: Record<string, string>; protocols?: string[]; ca?: string | Buffer } = {},
): Promise<UpgradeRefusal> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, options.protocols ?? [], {
      ...(options.ca !== undefined ? { ca: options.ca } : {}),
      ...(options.headers !== undefined ? { headers: options.headers } : {}),
    });
    ws.once('open', () => {
      ws.close();
      reject(new Error('the upgrade was accepted'));
    });
    ws.once('unexpected-response', (_req, res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString();
        resolve({ code: res.statusCode ?? 0, body: text ? (JSON.parse(text) as Record<string, unknown>) : {} });
      });
    });
    ws.once('error', () => undefined);
  });
}
