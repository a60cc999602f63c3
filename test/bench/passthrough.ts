// The practical floor for the gateway: the least a fastify + undici service can do and still be a
// JSON gateway. It parses the request body, re-serialises it to the upstream over a keep-alive undici
// Agent, parses the JSON answer and lets fastify serialise it back (a gateway must read the answer,
// e.g. for usage). `stream: true` answers are piped through untouched. Child process of run.ts.
import Fastify from 'fastify';
import { Agent, request } from 'undici';

const UPSTREAM = process.env.PASSTHROUGH_UPSTREAM;
if (UPSTREAM === undefined) throw new Error('PASSTHROUGH_UPSTREAM (origin of the mock upstream) is required');
const PORT = Number(process.env.PASSTHROUGH_PORT ?? 0);
const TARGET = `${UPSTREAM}/v1/chat/completions`;

const agent = new Agent({ keepAliveTimeout: 60_000, keepAliveMaxTimeout: 120_000, connections: 256 });
const UPSTREAM_HEADERS = { 'content-type': 'application/json', authorization: 'Bearer sk-passthrough' };

interface StreamFlag {
  stream?: unknown;
}

function wantsStream(body: unknown): boolean {
  // Only the `stream` member is read; any JSON object is forwarded as is.
  return typeof body === 'object' && body !== null && (body as StreamFlag).stream === true;
}

const app = Fastify({ logger: false });

app.post('/v1/chat/completions', async (req, reply) => {
  const upstream = await request(TARGET, {
    dispatcher: agent,
    method: 'POST',
    headers: UPSTREAM_HEADERS,
    body: JSON.stringify(req.body),
  });
  reply.code(upstream.statusCode);
  if (wantsStream(req.body) && upstream.statusCode === 200) {
    reply.header('content-type', 'text/event-stream; charset=utf-8').header('cache-control', 'no-cache');
    return reply.send(upstream.body);
  }
  return upstream.body.json();
});

const address = await app.listen({ port: PORT, host: '127.0.0.1' });
const port = Number(new URL(address).port);
if (process.send) process.send({ type: 'ready', port });
else process.stdout.write(`pass-through on ${address} -> ${UPSTREAM}\n`);

process.on('disconnect', () => process.exit(0));
process.on('SIGTERM', () => process.exit(0));
