// The WebSocket server of the whole app (@fastify/websocket, registered once on the root: it listens to the
// HTTP server's upgrades and routes each through fastify, so an upgrade passes the same hooks, authentication
// included, as any request). Routes opt in with `wsHandler`.
import fastifyWebsocket from '@fastify/websocket';
import type { FastifyInstance } from 'fastify';

/** Largest message a caller may send on a session (OpenAI's own bound on one audio append is 15 MiB). */
export const MAX_CLIENT_MESSAGE_BYTES = 16 * 1024 * 1024;

/** The subprotocol prefix a browser's realtime WebSocket carries its key in (OpenAI's convention). */
export const REALTIME_KEY_SUBPROTOCOL = 'openai-insecure-api-key.';

/** Subprotocols that carry a credential: never chosen, so never echoed back in the upgrade's answer. */
const CREDENTIAL_PROTOCOL = /^openai-insecure-api-key\./i;

export function installWebSocket(app: FastifyInstance): void {
  app.register(fastifyWebsocket, {
    options: {
      maxPayload: MAX_CLIENT_MESSAGE_BYTES,
      perMessageDeflate: false,
      // The first offered subprotocol that is not a credential (browsers offer `realtime` first).
      handleProtocols: (protocols) => [...protocols].find((p) => !CREDENTIAL_PROTOCOL.test(p)) ?? false,
    },
  });
}
