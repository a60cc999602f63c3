// Count tokens through `POST /responses/input_tokens`: the chat-shaped request is expressed as Responses input.
import type { ChatMessage, ContentPart, FunctionTool } from '../../schemas/chat.ts';
import type { CountTokensRequest, CountTokensResponse } from '../../schemas/count-tokens.ts';
import { ProviderError } from '../errors.ts';
import type { CallContext } from '../types.ts';
import type { OpenAIStyleEndpoints } from './endpoints.ts';
import { callJson } from './request.ts';

type InputItem = Record<string, unknown>;

export async function countTokens(
  ep: OpenAIStyleEndpoints,
  req: CountTokensRequest,
  ctx: CallContext,
): Promise<CountTokensResponse> {
  const body = JSON.stringify(countTokensBody(req, ep.bodyModel(ctx)));
  const res = await callJson<{ input_tokens: number }>(
    ep,
    'input_tokens',
    ctx,
    body,
    (v) => typeof v['input_tokens'] === 'number',
  );
  return { object: 'response.input_tokens', input_tokens: res.input_tokens, model: ctx.model };
}

/** The `input_tokens` request body: messages become Responses input items, function tools lose their wrapper. */
export function countTokensBody(req: CountTokensRequest, model: string): Record<string, unknown> {
  const input: InputItem[] = [];
  for (const m of req.messages) appendMessage(input, m);
  const body: Record<string, unknown> = { model, input };
  if (req.tools && req.tools.length > 0) body['tools'] = req.tools.map(toResponsesTool);
  return body;
}

function appendMessage(out: InputItem[], m: ChatMessage): void {
  switch (m.role) {
    case 'system':
    case 'developer':
    case 'user':
      out.push({ type: 'message', role: m.role, content: inputContent(m.content) });
      return;
    case 'assistant':
      if (m.content !== null && m.content !== undefined && (typeof m.content === 'string' || m.content.length > 0)) {
        out.push({ type: 'message', role: 'assistant', content: assistantContent(m.content) });
      }
      for (const call of m.tool_calls ?? []) {
        out.push({
          type: 'function_call',
          call_id: call.id,
          name: call.function.name,
          arguments: call.function.arguments,
        });
      }
      return;
    case 'tool':
      out.push({ type: 'function_call_output', call_id: m.tool_call_id, output: textOf(m.content) });
      return;
  }
}

function inputContent(content: string | ContentPart[]): string | InputItem[] {
  return typeof content === 'string' ? content : content.map(inputPart);
}

function inputPart(p: ContentPart): InputItem {
  switch (p.type) {
    case 'text':
      return { type: 'input_text', text: p.text };
    case 'image_url':
      return { type: 'input_image', image_url: p.image_url.url, detail: p.image_url.detail ?? 'auto' };
    case 'file':
      return { type: 'input_file', ...p.file };
    case 'refusal':
      return { type: 'input_text', text: p.refusal };
    case 'input_audio':
      break;
  }
  throw new ProviderError('invalid_request', 'count tokens: audio content cannot be counted by the Responses API');
}

function assistantContent(content: string | ContentPart[]): string | InputItem[] {
  if (typeof content === 'string') return content;
  return content.map((p): InputItem => {
    if (p.type === 'text') return { type: 'output_text', text: p.text, annotations: [] };
    if (p.type === 'refusal') return { type: 'refusal', refusal: p.refusal };
    throw new ProviderError('invalid_request', `count tokens: assistant messages cannot hold ${p.type} content`);
  });
}

function textOf(content: string | ContentPart[]): string {
  if (typeof content === 'string') return content;
  return content.map((p) => (p.type === 'text' ? p.text : '')).join('');
}

function toResponsesTool(t: FunctionTool): Record<string, unknown> {
  return {
    type: 'function',
    name: t.function.name,
    description: t.function.description ?? null,
    parameters: t.function.parameters ?? null,
    // chat tools are lax by default while Responses defaults to strict: keep the chat meaning
    strict: t.function.strict ?? false,
  };
}
