// convert_text_to_chat: a text completion request as a chat request, and the chat answer (whole or streamed) as a
// text completion. Pure translation; what has no chat equivalent is refused with the field's name.
import { ProviderError } from '../../providers/errors.ts';
import type { ChatChunk, ChatRequest, ChatResponse, FinishReason } from '../../schemas/chat.ts';
import type { TextCompletionChoice, TextCompletionRequest, TextCompletionResponse } from '../../schemas/completions.ts';

const WHY = 'has no chat equivalent (convert_text_to_chat sends this text completion as a chat request)';

/** Fields copied unchanged: the chat API has them under the same name and meaning. */
const SAME = [
  'max_tokens',
  'temperature',
  'top_p',
  'n',
  'stop',
  'stream',
  'stream_options',
  'presence_penalty',
  'frequency_penalty',
  'logit_bias',
  'seed',
  'user',
] as const;

export function textToChatRequest(req: TextCompletionRequest): ChatRequest {
  const p = req.prompt;
  let prompt: string;
  if (typeof p === 'string') prompt = p;
  else if (p.length === 1 && typeof p[0] === 'string') prompt = p[0];
  else if (p.every((x) => typeof x === 'string')) {
    throw new ProviderError('invalid_request', `prompt: ${p.length} prompts in one request ${WHY}; send one each`);
  } else throw new ProviderError('invalid_request', `prompt: token ids ${WHY}`);
  if (req.suffix != null) throw new ProviderError('invalid_request', `suffix ${WHY}`);
  if (req.echo === true) throw new ProviderError('invalid_request', `echo ${WHY}`);
  if (req['best_of'] != null && req['best_of'] !== 1) throw new ProviderError('invalid_request', `best_of ${WHY}`);
  const chat: ChatRequest = { model: req.model, messages: [{ role: 'user', content: prompt }] };
  const same: Record<string, unknown> = {};
  for (const f of SAME) if (req[f] !== undefined) same[f] = req[f];
  return Object.assign(chat, same);
}

function finish(reason: FinishReason | null): TextCompletionChoice['finish_reason'] {
  if (reason === null) return null;
  if (reason === 'length' || reason === 'content_filter') return reason;
  return 'stop';
}

export function chatToTextResponse(res: ChatResponse): TextCompletionResponse {
  return {
    id: res.id,
    object: 'text_completion',
    created: res.created,
    model: res.model,
    choices: res.choices.map((c) => ({
      index: c.index,
      text: c.message.content ?? '',
      finish_reason: finish(c.finish_reason),
      logprobs: null,
    })),
    ...(res.usage ? { usage: res.usage } : {}),
  };
}

/** Chat chunks as text completion chunks, one for one (a chunk carrying only the role is skipped). */
export async function* chatStreamToText(chunks: AsyncIterable<ChatChunk>): AsyncIterable<TextCompletionResponse> {
  for await (const c of chunks) {
    const choices: TextCompletionChoice[] = [];
    for (const ch of c.choices) {
      const text = ch.delta.content ?? '';
      if (text === '' && ch.finish_reason === null) continue;
      choices.push({ index: ch.index, text, finish_reason: finish(ch.finish_reason), logprobs: null });
    }
    if (choices.length === 0 && !c.usage && c.choices.length > 0) continue;
    yield {
      id: c.id,
      object: 'text_completion',
      created: c.created,
      model: c.model,
      choices,
      ...(c.usage ? { usage: c.usage } : {}),
    };
  }
}
