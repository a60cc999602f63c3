// The AWS event-stream codec (application/vnd.amazon.eventstream: prelude, headers, payload, both CRCs) of
// @smithy/eventstream-codec, shared by the bedrock provider (decoding Bedrock's streams) and the Converse format
// (encoding streams to its callers). Loaded by the first frame, not at start: a gateway without Bedrock never
// needs it. Frames are encoded and decoded synchronously (a stream encoder's `chunk`, a cached answer's replay),
// so the first use loads it with require(): the packages are CommonJS, which import() would also load
// synchronously (its dependencies are require()d), so an async load would block the process just as long.
import { createRequire } from 'node:module';
import type { EventStreamCodec } from '@smithy/eventstream-codec';
import type { fromUtf8, toUtf8 } from '@smithy/util-utf8';

export interface EventCodec {
  codec: EventStreamCodec;
  fromUtf8: typeof fromUtf8;
  toUtf8: typeof toUtf8;
}

const requireCjs = createRequire(import.meta.url);
let loaded: EventCodec | undefined;

/** The codec, loaded once on first call (~20 ms). */
export function eventCodec(): EventCodec {
  if (loaded) return loaded;
  // require() is typed `any`: these are the packages' own module types.
  const lib = requireCjs('@smithy/eventstream-codec') as typeof import('@smithy/eventstream-codec');
  const utf8 = requireCjs('@smithy/util-utf8') as typeof import('@smithy/util-utf8');
  loaded = {
    codec: new lib.EventStreamCodec(utf8.toUtf8, utf8.fromUtf8),
    fromUtf8: utf8.fromUtf8,
    toUtf8: utf8.toUtf8,
  };
  return loaded;
}
