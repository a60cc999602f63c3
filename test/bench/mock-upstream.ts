// A fast OpenAI-compatible and Anthropic-compatible upstream for the load benchmark, on bare node:http so it
// costs as little as possible. POST .../chat/completions answers a fixed chat.completion; with `stream: true`
// it sends MOCK_STREAM_CHUNKS SSE chunks MOCK_STREAM_GAP_MS apart, then the finish chunk and `data: [DONE]`.
// POST /v1/messages is Anthropic's Messages API, with the same timing (mock-anthropic.ts).
// Run by run.ts as a child process (reports its port over IPC); run alone it prints its address.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { answerMessages, anthropicFrames, MOCK_TEXT } from './mock-anthropic.ts';

const CHUNKS = Math.max(1, Number(process.env.MOCK_STREAM_CHUNKS ?? 8));
const GAP_MS = Math.max(0, Number(process.env.MOCK_STREAM_GAP_MS ?? 10));
const PORT = Number(process.env.MOCK_PORT ?? 0);
const CREATED = 1_700_000_000;

const COMPLETION = Buffer.from(
  JSON.stringify({
    id: 'chatcmpl-bench',
    object: 'chat.completion',
    created: CREATED,
    model: 'gpt-4o-mini',
    choices: [
      {
        index: 0,
        message: { role: 'assistant', content: MOCK_TEXT, refusal: null },
        logprobs: null,
        finish_reason: 'stop',
      },
    ],
    usage: { prompt_tokens: 12, completion_tokens: 7, total_tokens: 19 },
    system_fingerprint: 'fp_bench',
  }),
);
const JSON_HEADERS = { 'content-type': 'application/json', 'content-length': String(COMPLETION.length) };
const SSE_HEADERS = { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' };

function sse(choices: unknown[], usage: unknown = undefined): Buffer {
  const chunk = {
    id: 'chatcmpl-bench',
    object: 'chat.completion.chunk',
    created: CREATED,
    model: 'gpt-4o-mini',
    system_fingerprint: 'fp_bench',
    choices,
    ...(usage === undefined ? {} : { usage }),
  };
  return Buffer.from(`data: ${JSON.stringify(chunk)}\n\n`);
}

const CONTENT_CHUNKS: Buffer[] = [];
for (let i = 0; i < CHUNKS; i++) {
  const delta = i === 0 ? { role: 'assistant', content: 'tok0 ' } : { content: `tok${i} ` };
  CONTENT_CHUNKS.push(sse([{ index: 0, delta, logprobs: null, finish_reason: null }]));
}
const FINISH = sse([{ index: 0, delta: {}, logprobs: null, finish_reason: 'stop' }]);
const USAGE = sse([], { prompt_tokens: 12, completion_tokens: CHUNKS, total_tokens: 12 + CHUNKS });
const DONE = Buffer.from('data: [DONE]\n\n');
const ANTHROPIC_FRAMES = anthropicFrames(CHUNKS);

interface ChatBody {
  stream?: unknown;
  stream_options?: { include_usage?: unknown };
}

function isChatBody(value: unknown): value is ChatBody {
  return typeof value === 'object' && value !== null;
}

/** Writes the chunks with a gap between them; stops early if the client goes away. */
function stream(res: ServerResponse, includeUsage: boolean): void {
  res.writeHead(200, SSE_HEADERS);
  let i = 0;
  let timer: NodeJS.Timeout | undefined;
  const next = (): void => {
    if (res.destroyed) return;
    res.write(CONTENT_CHUNKS[i]);
    i += 1;
    if (i < CHUNKS) {
      timer = setTimeout(next, GAP_MS);
      return;
    }
    res.write(FINISH);
    if (includeUsage) res.write(USAGE);
    res.end(DONE);
  };
  res.once('close', () => clearTimeout(timer));
  next();
}

function answer(res: ServerResponse, status: number, message: string): void {
  const body = JSON.stringify({ error: { message, type: 'invalid_request_error', param: null, code: null } });
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

function handle(req: IncomingMessage, res: ServerResponse): void {
  const parts: Buffer[] = [];
  req.on('data', (part: Buffer) => parts.push(part));
  req.on('end', () => {
    const anthropic = req.url === '/v1/messages';
    if (req.method !== 'POST' || req.url === undefined || !(anthropic || req.url.endsWith('/chat/completions'))) {
      answer(res, 404, `no route for ${req.method} ${req.url}`);
      return;
    }
    let body: unknown;
    try {
      body = JSON.parse(parts.length === 1 ? parts[0]!.toString() : Buffer.concat(parts).toString());
    } catch {
      answer(res, 400, 'request body is not JSON');
      return;
    }
    if (!isChatBody(body)) {
      answer(res, 400, 'request body is not a JSON object');
      return;
    }
    if (anthropic) {
      answerMessages(res, body.stream === true, ANTHROPIC_FRAMES, GAP_MS);
      return;
    }
    if (body.stream === true) {
      stream(res, body.stream_options?.include_usage === true);
      return;
    }
    res.writeHead(200, JSON_HEADERS);
    res.end(COMPLETION);
  });
}

const server = createServer({ requestTimeout: 0 }, handle);
// Clients keep connections for the whole run; never close them under the client's feet.
server.keepAliveTimeout = 120_000;
server.headersTimeout = 130_000;
server.listen(PORT, '127.0.0.1', () => {
  // listen() on a TCP port always yields an AddressInfo.
  const { port } = server.address() as AddressInfo;
  if (process.send) process.send({ type: 'ready', port });
  else process.stdout.write(`mock upstream on http://127.0.0.1:${port}\n`);
});
// Under run.ts the parent owns us: when it goes away (IPC closes), stop.
process.on('disconnect', () => process.exit(0));
process.on('SIGTERM', () => process.exit(0));
