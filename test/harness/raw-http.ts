// HTTP/1.1 over a plain socket: request targets and framing that fetch and node:http will not send
// (absolute-form, percent-encoded or dot-segment paths, slow or unfinished bodies).
import { connect, type Socket } from 'node:net';

export interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
  /** The server closed the connection after this response. */
  closed: boolean;
}

export function openSocket(baseUrl: string): Promise<Socket> {
  const u = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const socket = connect({ host: u.hostname, port: Number(u.port) }, () => resolve(socket));
    socket.once('error', reject);
  });
}

/** Sends `head` (request line and headers, without the blank line) and `body`, reads one response. */
export async function rawRequest(
  baseUrl: string,
  head: string,
  body = '',
  opts: { timeoutMs?: number } = {},
): Promise<RawResponse> {
  const socket = await openSocket(baseUrl);
  socket.write(`${head}\r\n\r\n${body}`);
  return readResponse(socket, opts.timeoutMs ?? 10_000);
}

/** Reads one response from `socket` (content-length framed, or until close), then waits briefly for a close. */
export function readResponse(socket: Socket, timeoutMs: number): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    let data = Buffer.alloc(0);
    let parsed: Omit<RawResponse, 'closed'> | undefined;
    const timer = setTimeout(() => {
      socket.destroy();
      if (parsed) resolve({ ...parsed, closed: false });
      else reject(new Error(`no complete response within ${timeoutMs} ms: ${data.toString('latin1').slice(0, 200)}`));
    }, timeoutMs);
    const finish = (closed: boolean) => {
      clearTimeout(timer);
      socket.destroy();
      if (parsed) resolve({ ...parsed, closed });
      else reject(new Error(`connection closed before a response: ${data.toString('latin1').slice(0, 200)}`));
    };
    socket.on('data', (chunk: Buffer) => {
      data = Buffer.concat([data, chunk]);
      if (parsed) return;
      const end = data.indexOf('\r\n\r\n');
      if (end === -1) return;
      const lines = data.subarray(0, end).toString('latin1').split('\r\n');
      const status = Number((lines[0] ?? '').split(' ')[1]);
      const headers: Record<string, string> = {};
      for (const line of lines.slice(1)) {
        const i = line.indexOf(':');
        headers[line.slice(0, i).trim().toLowerCase()] = line.slice(i + 1).trim();
      }
      const len = Number(headers['content-length'] ?? 0);
      if (data.length - end - 4 < len) return;
      parsed = { status, headers, body: data.subarray(end + 4, end + 4 + len).toString('utf8') };
      // Give the server a moment to close the connection if it means to; otherwise it stays open.
      setTimeout(() => finish(false), 300);
    });
    socket.on('end', () => finish(true));
    socket.on('close', () => finish(true));
    socket.on('error', () => finish(true));
  });
}

/** Waits until the server closes `socket`; rejects after `timeoutMs`. */
export function closedByServer(socket: Socket, timeoutMs: number): Promise<string> {
  return new Promise((resolve, reject) => {
    let data = '';
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`connection still open after ${timeoutMs} ms`));
    }, timeoutMs);
    socket.on('data', (c: Buffer) => {
      data += c.toString('latin1');
    });
    const done = () => {
      clearTimeout(timer);
      resolve(data);
    };
    socket.once('close', done);
    socket.once('error', done);
  });
}
