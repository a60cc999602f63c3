// JSON request bodies: read with a byte limit counted on what arrives (chunked bodies too, not just the
// content-length header), refused past a nesting depth before they are parsed, then parsed with fastify's
// own parser (prototype-poisoning checks).
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { GatewayError } from './errors.ts';

/** Deeper JSON is refused: no API body needs it, and recursive code downstream must not meet 5,000 levels. */
export const MAX_JSON_DEPTH = 128;

const MB = 1024 * 1024;

/**
 * Installs the `application/json` parser. `limitBytes` is read per request (the limit can change at run
 * time through PUT /api/config). An empty body is no body (common on DELETE), not a syntax error.
 */
export function installJsonParser(app: FastifyInstance, limitBytes: () => number): void {
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.addContentTypeParser('application/json', (request, payload, done) => {
    const limit = limitBytes();
    const declared = Number(request.headers['content-length']);
    if (declared > limit) {
      done(tooLarge(limit), undefined);
      return;
    }
    const chunks: Buffer[] = [];
    let received = 0;
    const cleanup = () => {
      payload.removeListener('data', onData);
      payload.removeListener('end', onEnd);
      payload.removeListener('error', onError);
    };
    const onData = (chunk: Buffer | string) => {
      const buf = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
      received += buf.length;
      if (received > limit) {
        cleanup();
        payload.pause();
        done(tooLarge(limit), undefined);
        return;
      }
      chunks.push(buf);
    };
    const onError = (err: Error) => {
      cleanup();
      done(new GatewayError('invalid_request', `reading the request body failed: ${err.message}`), undefined);
    };
    const onEnd = () => {
      cleanup();
      if (!Number.isNaN(declared) && declared !== received) {
        done(new GatewayError('invalid_request', 'request body length does not match content-length'), undefined);
        return;
      }
      const text =
        chunks.length === 1 ? (chunks[0] as Buffer).toString('utf8') : Buffer.concat(chunks).toString('utf8');
      if (text === '') {
        done(null, undefined);
        return;
      }
      if (jsonDepthExceeds(text, MAX_JSON_DEPTH)) {
        done(
          new GatewayError('invalid_request', `request body nests JSON deeper than ${MAX_JSON_DEPTH} levels`),
          undefined,
        );
        return;
      }
      parseJson(request as FastifyRequest, text, done);
    };
    payload.on('data', onData);
    payload.on('end', onEnd);
    payload.on('error', onError);
  });
}

function tooLarge(limit: number): GatewayError {
  const mb = limit / MB;
  return new GatewayError('payload_too_large', `request body exceeds the limit of ${mb} MB`, {
    // The rest of the body is not read: the connection closes after the answer.
    headers: { connection: 'close' },
  });
}

/** True when brackets outside strings nest deeper than `max`. One pass over the text, no allocation. */
export function jsonDepthExceeds(text: string, max: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c /* \ */) i++;
      else if (c === 0x22 /* " */) inString = false;
    } else if (c === 0x22) {
      inString = true;
    } else if (c === 0x7b /* { */ || c === 0x5b /* [ */) {
      if (++depth > max) return true;
    } else if (c === 0x7d /* } */ || c === 0x5d /* ] */) {
      depth--;
    }
  }
  return false;
}
