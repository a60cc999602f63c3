// Pure pieces of the OpenAI-style providers: body rewriting, URL roots, count-token input, model lists, errors.
import { describe, expect, it } from 'vitest';
import { ProviderError } from '../../src/providers/errors.ts';
import { upstreamBody } from '../../src/providers/openai/body.ts';
import { countTokensBody } from '../../src/providers/openai/count-tokens.ts';
import { apiRoot } from '../../src/providers/openai/endpoints.ts';
import { parseOpenAIError } from '../../src/providers/openai/errors.ts';
import { toModelInfos } from '../../src/providers/openai/models.ts';

describe('upstreamBody', () => {
  it('replaces model, drops fallbacks, keeps everything else and leaves the caller object alone', () => {
    const req = {
      model: 'openai/gpt-4o',
      messages: [{ role: 'user', content: 'x' }],
      fallbacks: ['a/b'],
      seed: 3,
      extra: { y: 1 },
    };
    const snapshot = structuredClone(req);
    expect(JSON.parse(upstreamBody(req, 'gpt-4o', 'once'))).toEqual({
      model: 'gpt-4o',
      messages: req.messages,
      seed: 3,
      extra: { y: 1 },
    });
    expect(req).toEqual(snapshot);
  });

  it('forces stream on streaming calls and drops stream settings on the others', () => {
    const req = { model: 'm', prompt: 'p', stream: false, stream_options: { include_usage: true } };
    expect(JSON.parse(upstreamBody(req, 'u', 'stream'))).toEqual({
      model: 'u',
      prompt: 'p',
      stream: true,
      stream_options: { include_usage: true },
    });
    expect(JSON.parse(upstreamBody({ ...req, stream: true }, 'u', 'once'))).toEqual({ model: 'u', prompt: 'p' });
  });
});

describe('apiRoot', () => {
  it.each([
    ['https://api.openai.com', '/v1', 'https://api.openai.com/v1'],
    ['https://api.openai.com/v1', '/v1', 'https://api.openai.com/v1'],
    ['https://proxy.example/openai/v1///', '/v1', 'https://proxy.example/openai/v1'],
    ['https://api.groq.com/openai', '/v1', 'https://api.groq.com/openai/v1'],
    ['https://api.perplexity.ai/', '', 'https://api.perplexity.ai'],
  ])('%s + %s -> %s', (base, version, root) => {
    expect(apiRoot(base, version)).toBe(root);
  });
});

describe('countTokensBody', () => {
  it('maps multimodal user parts and assistant text to Responses input items', () => {
    const body = countTokensBody(
      {
        model: 'x',
        messages: [
          { role: 'developer', content: 'rules' },
          {
            role: 'user',
            content: [
              { type: 'text', text: 'look' },
              { type: 'image_url', image_url: { url: 'https://img/x.png' } },
              { type: 'file', file: { file_id: 'file-1' } },
            ],
          },
          { role: 'assistant', content: [{ type: 'text', text: 'seen' }] },
          { role: 'assistant', content: 'plain' },
          {
            role: 'tool',
            tool_call_id: 'c9',
            content: [
              { type: 'text', text: 'a' },
              { type: 'text', text: 'b' },
            ],
          },
        ],
      },
      'gpt-4.1',
    );
    expect(body).toEqual({
      model: 'gpt-4.1',
      input: [
        { type: 'message', role: 'developer', content: 'rules' },
        {
          type: 'message',
          role: 'user',
          content: [
            { type: 'input_text', text: 'look' },
            { type: 'input_image', image_url: 'https://img/x.png', detail: 'auto' },
            { type: 'input_file', file_id: 'file-1' },
          ],
        },
        { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'seen', annotations: [] }] },
        { type: 'message', role: 'assistant', content: 'plain' },
        { type: 'function_call_output', call_id: 'c9', output: 'ab' },
      ],
    });
  });

  it('refuses audio, which the Responses token counter cannot take', () => {
    const run = () =>
      countTokensBody(
        {
          model: 'x',
          messages: [{ role: 'user', content: [{ type: 'input_audio', input_audio: { data: 'AA', format: 'wav' } }] }],
        },
        'm',
      );
    expect(run).toThrow(ProviderError);
    expect(run).toThrow(/audio/);
  });
});

describe('toModelInfos', () => {
  it('reads {data: [...]} and bare arrays, filling owned_by and created, skipping entries without id', () => {
    expect(
      toModelInfos({ object: 'list', data: [{ id: 'a', created: 5, owned_by: 'me' }, { name: 'no id' }] }, 'groq'),
    ).toEqual([{ id: 'a', object: 'model', created: 5, owned_by: 'me' }]);
    expect(toModelInfos([{ id: 'b', type: 'chat' }], 'together')).toEqual([
      { id: 'b', object: 'model', created: 0, owned_by: 'together' },
    ]);
  });
});

describe('parseOpenAIError', () => {
  it('reads the OpenAI, Mistral and FastAPI error shapes', () => {
    expect(parseOpenAIError(400, { error: { message: 'm', type: 't', param: 'p', code: 'c' } }, '')).toEqual({
      message: 'm',
      type: 't',
      code: 'c',
    });
    expect(parseOpenAIError(401, { object: 'error', message: 'Unauthorized', type: 'auth' }, '')).toMatchObject({
      message: 'Unauthorized',
      type: 'auth',
    });
    expect(
      parseOpenAIError(422, { detail: [{ loc: ['body', 'model'], msg: 'field required' }] }, '').message,
    ).toContain('field required');
    expect(parseOpenAIError(404, { detail: 'Not Found' }, '').message).toBe('Not Found');
  });
});
