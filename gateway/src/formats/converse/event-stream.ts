// The AWS event-stream framing of the Bedrock runtime's streamed answers (application/vnd.amazon.eventstream):
// one binary message per event, encoded by @smithy/eventstream-codec (prelude, headers, payload, both CRCs), which
// the first streamed answer loads (providers/bedrock/event-codec.ts).
import type { ErrorEnvelope } from '../../http/errors.ts';
import { eventCodec } from '../../providers/bedrock/event-codec.ts';

export const EVENT_STREAM_CONTENT_TYPE = 'application/vnd.amazon.eventstream';

function message(headers: Record<string, string>, payload: unknown): Uint8Array {
  const { codec, fromUtf8 } = eventCodec();
  return codec.encode({
    headers: Object.fromEntries(Object.entries(headers).map(([k, v]) => [k, { type: 'string', value: v }])),
    body: fromUtf8(JSON.stringify(payload)),
  });
}

/** One event (`:event-type` names the union member the SDK decodes it as). */
export function eventFrame(name: string, payload: unknown): Uint8Array {
  return message({ ':message-type': 'event', ':event-type': name, ':content-type': 'application/json' }, payload);
}

/** Exception members both streams (ConverseStream, InvokeModelWithResponseStream) declare. */
const STREAM_EXCEPTIONS = new Set([
  'internalServerException',
  'modelStreamErrorException',
  'validationException',
  'throttlingException',
  'serviceUnavailableException',
]);

/**
 * The exception member of the stream union that the SDK throws as its class: an upstream Bedrock exception keeps
 * its name; other failures go by status, an upstream failure mid-stream being the model's stream error.
 */
export function streamExceptionName(status: number, type: string): string {
  const member = type.charAt(0).toLowerCase() + type.slice(1);
  if (STREAM_EXCEPTIONS.has(member)) return member;
  if (status === 429) return 'throttlingException';
  if (status === 503) return 'serviceUnavailableException';
  if (status === 500) return 'internalServerException';
  if (status >= 400 && status < 424) return 'validationException';
  return 'modelStreamErrorException';
}

/** A failure after the stream started, as the last message (`:message-type: exception`). */
export function exceptionFrame(env: ErrorEnvelope): Uint8Array {
  const name = streamExceptionName(env.status_code, env.error.type);
  return message(
    { ':message-type': 'exception', ':exception-type': name, ':content-type': 'application/json' },
    { message: env.error.message },
  );
}
