// The fake Gemini model: what it answers to a generateContent body, whole and as stream events (a function call
// when tools are offered, else an echo), and the word counts and vectors the fake's other endpoints return.

export type Json = Record<string, unknown>;

export interface Reply {
  whole: Json;
  events: Json[];
}

/** The fake's model: a function call when tools are offered, else an echo (JSON when JSON is asked for). */
export function answer(body: Json, model: string): Reply {
  const contents = (Array.isArray(body['contents']) ? body['contents'] : []).filter(isObj);
  const last = contents.at(-1);
  const lastParts = Array.isArray(last?.['parts']) ? last['parts'].filter(isObj) : [];
  const responses = lastParts.map((p) => p['functionResponse']).filter(isObj);
  const lastUser = [...contents].reverse().find((c) => c['role'] !== 'model' && textOf(c) !== '');
  const userText = lastUser ? textOf(lastUser) : '';
  const gen = isObj(body['generationConfig']) ? body['generationConfig'] : {};
  const toolConfig = isObj(body['toolConfig']) ? body['toolConfig'] : {};
  const calling = isObj(toolConfig['functionCallingConfig']) ? toolConfig['functionCallingConfig'] : {};
  const decls = (Array.isArray(body['tools']) ? body['tools'] : [])
    .filter(isObj)
    .flatMap((t) => (Array.isArray(t['functionDeclarations']) ? t['functionDeclarations'].filter(isObj) : []));
  const thinking = isObj(gen['thinkingConfig']) && gen['thinkingConfig']['includeThoughts'] === true;
  const n = typeof gen['candidateCount'] === 'number' ? gen['candidateCount'] : 1;
  const responseId = `resp-${Math.random().toString(36).slice(2, 10)}`;
  const prompt = promptTokens(body);
  const thoughts = thinking ? 3 : 0;

  let finishReason = 'STOP';
  let parts: Json[][];
  let outputTokens: number;
  if (decls.length > 0 && responses.length === 0 && calling['mode'] !== 'NONE') {
    const allowed = Array.isArray(calling['allowedFunctionNames']) ? calling['allowedFunctionNames'] : [];
    const decl = decls.find((d) => d['name'] === allowed[0]) ?? decls[0]!;
    const call = {
      functionCall: { name: decl['name'], args: argsFor(decl, userText) },
      thoughtSignature: 'c2lnbmF0dXJlLTE=',
    };
    parts = [[call]];
    outputTokens = 5;
  } else {
    let text =
      responses.length > 0
        ? `tool said: ${JSON.stringify(responses.map((r) => r['response']))}`
        : gen['responseMimeType'] === 'application/json'
          ? JSON.stringify({ echo: userText })
          : `echo: ${userText}`;
    let pieces = text.split(/(?<= )/);
    const max = gen['maxOutputTokens'];
    if (typeof max === 'number' && pieces.length > max) {
      pieces = pieces.slice(0, max);
      text = pieces.join('');
      finishReason = 'MAX_TOKENS';
    }
    outputTokens = pieces.length;
    parts = pieces.map((t) => [{ text: t }]);
  }
  if (thinking) parts.unshift([{ text: 'Thinking it over.', thought: true }]);

  const usage = (final: boolean): Json => ({
    promptTokenCount: prompt,
    ...(final ? { candidatesTokenCount: outputTokens * n } : {}),
    ...(thinking ? { thoughtsTokenCount: thoughts } : {}),
    totalTokenCount: prompt + (final ? outputTokens * n : 0) + thoughts,
  });
  const candidates = (p: Json[], finish: boolean): Json[] =>
    Array.from({ length: n }, (_, index) => ({
      content: { role: 'model', parts: p },
      ...(finish ? { finishReason } : {}),
      index,
    }));
  const whole = {
    candidates: candidates(parts.flat(), true),
    usageMetadata: usage(true),
    modelVersion: model,
    responseId,
  };
  const events = parts.map((p, i) => {
    const final = i === parts.length - 1;
    return { candidates: candidates(p, final), usageMetadata: usage(final), modelVersion: model, responseId };
  });
  return { whole, events };
}

/** Each string property of the declared parameters gets the user's text. */
function argsFor(decl: Json, userText: string): Json {
  const schema = isObj(decl['parametersJsonSchema'])
    ? decl['parametersJsonSchema']
    : isObj(decl['parameters'])
      ? decl['parameters']
      : {};
  const props = isObj(schema['properties']) ? schema['properties'] : {};
  const args: Json = {};
  for (const [name, p] of Object.entries(props)) {
    if (isObj(p) && String(p['type']).toLowerCase() === 'string') args[name] = userText;
  }
  return args;
}

/** Words of every text in contents and system instruction: the fake's token count. */
export function promptTokens(body: Json): number {
  const contents = Array.isArray(body['contents']) ? body['contents'] : [];
  return [...contents, body['systemInstruction']].reduce<number>((sum, c) => sum + words(textOf(c)), 0);
}

export function textOf(content: unknown): string {
  if (!isObj(content) || !Array.isArray(content['parts'])) return '';
  return content['parts']
    .filter(isObj)
    .map((p) => (typeof p['text'] === 'string' && p['thought'] !== true ? p['text'] : ''))
    .join('');
}

export function words(text: string): number {
  return text.split(/\s+/).filter(Boolean).length;
}

/** A deterministic vector derived from the text, so tests can tell inputs apart. */
export function vector(text: string, dims: number): number[] {
  return Array.from({ length: dims }, (_, i) => ((text.charCodeAt(i % Math.max(text.length, 1)) || 0) + i) / 1000);
}

export function isObj(v: unknown): v is Json {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
