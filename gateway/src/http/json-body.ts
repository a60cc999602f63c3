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

/**
 * True when brackets outside strings nest deeper than `max`. One pass, no allocation; string contents (most
 * of a body) are skipped with indexOf, so the pass costs less than the parse it guards.
 */
export function jsonDepthExceeds(text: string, max: number): boolean {
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22 /* " */) {
      i = closingQuote(text, i + 1);
      if (i === -1) return false; // unterminated: the parser refuses it
    } else if (c === 0x7b /* { */ || c === 0x5b /* [ */) {
      if (++depth > max) return true;
    } else if (c === 0x7d /* } */ || c === 0x5d /* ] */) {
      depth--;
    }
  }
  return false;
}

/** Index of the quote that ends a string starting at `from` (a quote after an even run of backslashes). */
function closingQuote(text: string, from: number): number {
  let j = from;
  for (;;) {
    j = text.indexOf('"', j);
    if (j === -1) return -1;
    let backslashes = 0;
    while (text.charCodeAt(j - 1 - backslashes) === 0x5c /* \ */) backslashes++;
    if (backslashes % 2 === 0) return j;
    j++;
  }
}
