// Requests the HTTP parser refuses before fastify sees them (malformed request line or headers, headers
// too large, a request not received in time) still get the gateway's error envelope, then the connection
// closes.
import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import { timeOrderedId } from '../state/ids.ts';
import { GatewayError, toEnvelope } from './errors.ts';

export function answerClientError(err: Error & { code?: string }, socket: Socket): void {
  // A reset connection has no one left to answer.
  if (err.code === 'ECONNRESET' || socket.destroyed) return;
  const error =
    err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
      ? new GatewayError('request_timeout', 'the request was not received in time')
      : err.code === 'HPE_HEADER_OVERFLOW'
        ? new GatewayError('headers_too_large', 'the request headers are too large')
        : new GatewayError('invalid_request', 'malformed HTTP request');
  if (socket.writable) {
    const id = timeOrderedId();
    const body = JSON.stringify(toEnvelope(error, id));
    socket.write(
      `HTTP/1.1 ${error.status} ${STATUS_CODES[error.status]}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\nx-gateway-request-id: ${id}\r\nconnection: close\r\n\r\n${body}`,
    );
  }
  socket.destroy();
}
