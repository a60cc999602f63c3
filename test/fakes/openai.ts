// Fake OpenAI upstream: chat completions, text completions, embeddings, Responses (+ streams), input token
// counting and models, speaking the real wire format closely enough for the official `openai` SDK. Routes match
// on the path suffix, so the same fake serves `/v1/...`, prefixed roots (`/openai/v1`, `/api/v1`), rootless
// servers (`/chat/completions`) and Azure (`/openai/deployments/{d}/...`, `/openai/v1/responses`).
// Answers echo the model and the last user message so tests can assert what the upstream received. Stored
// responses can be continued (`previous_response_id`, openai-responses.ts); shared wire helpers are in openai-wire.ts.
import type { ServerResponse } from 'node:http';
import { inputTokens, responses } from './openai-responses.ts';
import {
  body,
  chatUsage,
  checkStreamOptions,
  fakeReply,
  invalid,
  type Json,
  modelOf,
  nextId,
  now,
  type OpenAIFakeStreamState,
  obj,
  objects,
  textOfContent,
  tokens,
  words,
  writeSse,
} from './openai-wire.ts';
import { FakeServer, type RecordedRequest, type Route, sendJson } from './server.ts';

export { fakeReply, type OpenAIFakeStreamState };

export type OpenAIFake = FakeServer & { stream: OpenAIFakeStreamState };

export function createOpenAIFake(opts: { gapMs?: number } = {}): OpenAIFake {
  const stream: OpenAIFakeStreamState = { gapMs: opts.gapMs ?? 0, completed: 0 };
  return Object.assign(new FakeServer(openAIRoutes(stream)), { stream });
}

/** Models listed by `GET .../models`. */
export const FAKE_MODELS = ['gpt-4o-mini', 'gpt-4.1', 'text-embedding-3-small'];

/** The deterministic vector the fake returns for one input (float32 values, so base64 round-trips exactly). */
export function fakeEmbedding(input: string, dimensions = 8): number[] {
  let h = 2166136261;
  for (let i = 0; i < input.length; i++) h = Math.imul(h ^ input.charCodeAt(i), 16777619);
  return Array.from({ length: dimensions }, (_, i) => Math.fround(Math.sin(h + i)));
}

function openAIRoutes(stream: OpenAIFakeStreamState): Route[] {
  return [
    { method: 'POST', path: /\/chat\/completions$/, handler: (req, res) => chat(req, res, stream) },
    { method: 'POST', path: /\/completions$/, handler: (req, res) => completions(req, res, stream) },
    { method: 'POST', path: /\/embeddings$/, handler: embeddings },
    { method: 'POST', path: /\/responses\/input_tokens$/, handler: inputTokens },
    { method: 'POST', path: /\/responses$/, handler: (req, res) => responses(req, res, stream) },
    { method: 'GET', path: /\/models$/, handler: models },
  ];
}

async function chat(req: RecordedRequest, res: ServerResponse, state: OpenAIFakeStreamState): Promise<void> {
  const b = body(req);
  const messages = objects(b['messages']);
  if (
    invalid(
      res,
      messages.length > 0,
      "Invalid 'messages': empty array. Expected an array with minimum length 1.",
      'messages',
    )
  )
    return;
  if (checkStreamOptions(res, b)) return;
  const model = modelOf(req, b);
  const last = messages.at(-1);
  const lastUser = textOfContent(messages.findLast((m) => m['role'] === 'user')?.['content']);
  const prompt = messages.reduce((n, m) => n + tokens(textOfContent(m['content'])), 0);
  const toolName = obj(objects(b['tools'])[0]?.['function'])?.['name'];
  const callTool = typeof toolName === 'string' && last?.['role'] === 'user' && b['tool_choice'] !== 'none';
  const text = fakeReply(model, lastUser);
  const args = JSON.stringify({ query: lastUser });
  const id = nextId('chatcmpl-');
  const created = now();
  const completion = callTool ? tokens(args) : tokens(text);
  const finish = callTool ? 'tool_calls' : 'stop';
  const callId = nextId('call_');

  if (b['stream'] !== true) {
    const message = callTool
      ? {
          role: 'assistant',
          content: null,
          refusal: null,
          annotations: [],
          tool_calls: [{ id: callId, type: 'function', function: { name: toolName, arguments: args } }],
        }
      : { role: 'assistant', content: text, refusal: null, annotations: [] };
    sendJson(res, 200, {
      id,
      object: 'chat.completion',
      created,
      model,
      choices: [{ index: 0, message, logprobs: null, finish_reason: finish }],
      usage: chatUsage(prompt, completion),
      service_tier: 'default',
      system_fingerprint: 'fp_fake',
    });
    return;
  }

  const includeUsage = obj(b['stream_options'])?.['include_usage'] === true;
  const chunk = (delta: Json, finishReason: string | null): { data: Json } => ({
    data: {
      id,
      object: 'chat.completion.chunk',
      created,
      model,
      service_tier: 'default',
      system_fingerprint: 'fp_fake',
      choices: [{ index: 0, delta, logprobs: null, finish_reason: finishReason }],
      ...(includeUsage ? { usage: null } : {}),
    },
  });
  const events = callTool
    ? [
        chunk(
          {
            role: 'assistant',
            content: null,
            tool_calls: [{ index: 0, id: callId, type: 'function', function: { name: toolName, arguments: '' } }],
          },
          null,
        ),
        ...words(args).map((a) => chunk({ tool_calls: [{ index: 0, function: { arguments: a } }] }, null)),
      ]
    : [
        chunk({ role: 'assistant', content: '', refusal: null }, null),
        ...words(text).map((w) => chunk({ content: w }, null)),
      ];
  events.push(chunk({}, finish));
  if (includeUsage) {
    events.push({
      data: {
        id,
        object: 'chat.completion.chunk',
        created,
        model,
        choices: [],
        usage: chatUsage(prompt, completion),
      },
    });
  }
  await writeSse(res, state, events);
}

async function completions(req: RecordedRequest, res: ServerResponse, state: OpenAIFakeStreamState): Promise<void> {
  const b = body(req);
  const p = b['prompt'];
  if (invalid(res, p !== undefined && p !== null, 'You must provide a prompt.', 'prompt')) return;
  if (checkStreamOptions(res, b)) return;
  const model = modelOf(req, b);
  const prompts =
    typeof p === 'string' ? [p] : Array.isArray(p) && p.every((x) => typeof x === 'string') ? p : [JSON.stringify(p)];
  const texts = prompts.map((x) => ` ${fakeReply(model, String(x))}`);
  const promptTokens = prompts.reduce((n, x) => n + tokens(String(x)), 0);
  const usage = chatUsage(
    promptTokens,
    texts.reduce((n, t) => n + tokens(t), 0),
  );
  const id = nextId('cmpl-');
  const created = now();
  const base = { id, object: 'text_completion', created, model, system_fingerprint: 'fp_fake' };
  if (b['stream'] !== true) {
    const choices = texts.map((text, index) => ({ text, index, logprobs: null, finish_reason: 'stop' }));
    sendJson(res, 200, { ...base, choices, usage });
    return;
  }
  const includeUsage = obj(b['stream_options'])?.['include_usage'] === true;
  const events: { data: Json }[] = [];
  texts.forEach((text, index) => {
    for (const w of words(text)) {
      events.push({ data: { ...base, choices: [{ text: w, index, logprobs: null, finish_reason: null }] } });
    }
    events.push({ data: { ...base, choices: [{ text: '', index, logprobs: null, finish_reason: 'stop' }] } });
  });
  if (includeUsage) events.push({ data: { ...base, choices: [], usage } });
  await writeSse(res, state, events);
}

function embeddings(req: RecordedRequest, res: ServerResponse): void {
  const b = body(req);
  const input = b['input'];
  const inputs: unknown[] = Array.isArray(input) && input.some((x) => typeof x !== 'number') ? input : [input];
  if (
    invalid(
      res,
      input !== undefined && input !== '' && inputs.length > 0,
      "'input' : input cannot be an empty string",
      'input',
    )
  )
    return;
  const dims = typeof b['dimensions'] === 'number' ? b['dimensions'] : 8;
  const base64 = b['encoding_format'] === 'base64';
  const data = inputs.map((x, index) => {
    const vector = fakeEmbedding(typeof x === 'string' ? x : JSON.stringify(x), dims);
    const embedding = base64 ? Buffer.from(new Float32Array(vector).buffer).toString('base64') : vector;
    return { object: 'embedding', index, embedding };
  });
  const promptTokens = inputs.reduce<number>(
    (n, x) => n + (typeof x === 'string' ? tokens(x) : Array.isArray(x) ? x.length : 1),
    0,
  );
  sendJson(res, 200, {
    object: 'list',
    data,
    model: modelOf(req, b),
    usage: { prompt_tokens: promptTokens, total_tokens: promptTokens },
  });
}

function models(_req: RecordedRequest, res: ServerResponse): void {
  sendJson(res, 200, {
    object: 'list',
    data: FAKE_MODELS.map((id) => ({ id, object: 'model', created: 1_700_000_000, owned_by: 'system' })),
  });
}
