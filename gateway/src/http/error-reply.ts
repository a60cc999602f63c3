// Every error answer leaves through here: the cause mapped into the gateway's vocabulary, the envelope built,
// logged by severity, then sent in the family's wire format (the gateway envelope on /v1 and /api; the caller's
// own error shape on a native format's routes).
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import type { WireFormat } from '../formats/types.ts';
import type { Runtime } from '../runtime.ts';
import { isDataException } from '../state/db/errors.ts';
import { isUnavailable } from '../state/errors.ts';
import { type ErrorEnvelope, type ExtraFields, GatewayError, toEnvelope } from './errors.ts';
import { RequestError } from './request-error.ts';

/** The body and status of an error in the family's format (the envelope itself when it has none). */
export function encodeError(env: ErrorEnvelope, format: WireFormat | undefined) {
  return format ? format.error(env) : { status: env.status_code, body: env, headers: undefined };
}

export function replyWithError(
  rt: Runtime,
  request: FastifyRequest,
  reply: FastifyReply,
  error: unknown,
  format: WireFormat | undefined,
): void {
  let cause: unknown = error;
  let extra: ExtraFields = {};
  if (error instanceof RequestError) {
    cause = error.error;
    extra = error.extra;
  }
  const mapped = mapError(cause);
  const env = toEnvelope(mapped, request.id, extra);
  if (env.status_code === 503) {
    // An expected answer while Redis or the database is away: one line, no stack, so an outage does not
    // flood the log.
    rt.logger.warn({ request_id: request.id, code: env.error.code, err: env.error.message }, 'request refused');
  } else if (env.status_code >= 500 && env.is_gateway_error) {
    rt.logger.error(
      { request_id: request.id, err: cause instanceof Error ? cause.stack : String(cause) },
      'request failed',
    );
  }
  if (mapped instanceof GatewayError && mapped.headers) reply.headers(mapped.headers);
  const out = encodeError(env, format);
  if (out.headers) reply.headers(out.headers);
  reply.code(out.status).header('x-gateway-request-id', request.id).send(out.body);
}

/** Errors that are not the gateway's own, in its vocabulary. */
function mapError(err: unknown): unknown {
  // Postgres or Redis away: the client may retry, the gateway is not broken (never 500).
  if (isUnavailable(err)) {
    return new GatewayError('service_unavailable', 'the database or Redis cannot be reached right now; retry shortly', {
      headers: { 'retry-after': '1' },
    });
  }
  // A value validation let through and Postgres refused: the request's fault, not the gateway's.
  if (isDataException(err)) {
    return new GatewayError('invalid_request', 'a value in the request cannot be stored (malformed or out of range)');
  }
  return mapFrameworkError(err);
}

/** fastify's own errors (bad JSON, wrong content type, body too large) in the gateway's vocabulary. */
function mapFrameworkError(err: unknown): unknown {
  if (!(err instanceof Error) || !('statusCode' in err || 'code' in err)) return err;
  const code = 'code' in err && typeof err.code === 'string' ? err.code : '';
  if (!code.startsWith('FST_') && !('statusCode' in err)) return err;
  switch (code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new GatewayError('payload_too_large', 'request body too large');
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new GatewayError('unsupported_media_type', `unsupported content type; send application/json`);
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return new GatewayError('invalid_request', 'request body is empty; expected JSON');
    default: {
      // fastify's own errors carry statusCode (checked by the `in` test above).
      const status = (err as FastifyError).statusCode ?? 500;
      return status < 500 ? new GatewayError('invalid_request', err.message) : err;
    }
  }
}
