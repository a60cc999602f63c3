// The Gemini API format in front of every provider family: the official @google/genai SDK on /genai asks each
// fake upstream (openai, anthropic, gemini, bedrock, cohere) for a chat, a stream and a function-call round trip
// (functionCall out, functionResponse back), translated where the provider does not speak the Gemini API.
import { describe, expect, it } from 'vitest';
import {
  genaiClient,
  post,
  QUESTION,
  resultTurn,
  upstreamJson,
  useGenaiGateway,
  WEATHER,
} from './format-genai-helpers.ts';

const env = useGenaiGateway();

describe.each(env.targets.map((t) => [t.family, t] as const))('/genai → %s', (_family, target) => {
  it('chat with a system instruction', async () => {
    const ai = genaiClient(env.gw);
    const res = await ai.models.generateContent({
      model: target.model,
      contents: 'hello there',
      config: { systemInstruction: 'You are terse.', maxOutputTokens: 100 },
    });
    expect(res.text).toContain('hello there');
    expect(res.candidates?.[0]?.finishReason).toBe('STOP');
    expect(res.usageMetadata?.totalTokenCount).toBeGreaterThan(0);
    expect(target.fake().requests.length).toBeGreaterThan(0);
    expect(JSON.stringify(upstreamJson(target.fake()))).toContain('You are terse.');
  });

  it('stream', async () => {
    const ai = genaiClient(env.gw);
    const stream = await ai.models.generateContentStream({ model: target.model, contents: 'hello there' });
    let text = '';
    let finish: string | undefined;
    let total = 0;
    for await (const chunk of stream) {
      text += chunk.text ?? '';
      finish = chunk.candidates?.[0]?.finishReason ?? finish;
      total = chunk.usageMetadata?.totalTokenCount ?? total;
    }
    expect(text).toContain('hello there');
    expect(finish).toBe('STOP');
    expect(total).toBeGreaterThan(0);
  });

  it('function call round trip', async () => {
    const ai = genaiClient(env.gw);
    const config = { tools: [{ functionDeclarations: [WEATHER] }] };
    const first = await ai.models.generateContent({ model: target.model, contents: QUESTION, config });
    const call = first.functionCalls?.[0];
    expect(call?.name).toBe('get_weather');
    // Each fake fills the arguments its own way (the openai fake always sends `query`): an object with a value.
    expect(Object.values(call?.args ?? {}).some((v) => typeof v === 'string' && v.length > 0)).toBe(true);
    const modelTurn = first.candidates?.[0]?.content;
    if (!modelTurn) throw new Error('no model turn');
    const second = await ai.models.generateContent({
      model: target.model,
      contents: resultTurn(modelTurn, 'get_weather', call?.id),
      config,
    });
    expect(second.text).toBeTruthy();
    expect(second.functionCalls ?? []).toHaveLength(0);
    expect(JSON.stringify(upstreamJson(target.fake()))).toContain('sunny');
  });
});

describe('proto field names (what Python’s google-genai SDK sends)', () => {
  it('reads snake_case fields when translating, and keeps the caller’s own schema keys', async () => {
    const openai = env.targets.find((t) => t.family === 'openai');
    if (!openai) throw new Error('no openai target');
    const r = await post(env.gw, '/genai/v1beta/models/openai/gpt-4o-mini:generateContent', {
      contents: [{ role: 'user', parts: [{ text: QUESTION }] }],
      system_instruction: { parts: [{ text: 'be brief' }] },
      generation_config: { max_output_tokens: 33 },
      tools: [
        {
          function_declarations: [
            {
              name: 'get_weather',
              parameters_json_schema: { type: 'object', properties: { city_name: { type: 'string' } } },
            },
          ],
        },
      ],
    });
    expect(r.status, r.text).toBe(200);
    const sent = upstreamJson(openai.fake());
    expect(sent['max_tokens'] ?? sent['max_completion_tokens']).toBe(33);
    expect(JSON.stringify(sent['messages'])).toContain('be brief');
    const tools = sent['tools'] as { function: { parameters: unknown } }[];
    expect(tools[0]?.function.parameters).toEqual({ type: 'object', properties: { city_name: { type: 'string' } } });
  });
});
