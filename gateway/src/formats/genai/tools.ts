// Function tools in the Gemini API format, for MCP tool injection and the auto-execute loop (generateContent
// only): declarations join the request's `functionDeclarations` (with `parametersJsonSchema`, which takes the MCP
// tool's JSON Schema as it is), calls are the one candidate's `functionCall` parts, and a turn goes on as the
// candidate's `model` content (thought signatures included, as Gemini requires) and a `user` turn of
// `functionResponse` parts, in the calls' order.
import type { JsonObject } from '../../providers/types.ts';
import { isRecord } from '../../util/records.ts';
import type { ToolCodec } from '../types.ts';
import type { GenaiCall, GenaiResult } from './call.ts';
import type { Content, GenerateContentRequest } from './schema.ts';

export const genaiTools: ToolCodec<GenaiCall, GenaiResult> = {
  declared(call) {
    // Embeddings and token counts on the same route take no tools.
    if (call.action !== 'generateContent') return undefined;
    const names = new Set<string>();
    for (const t of call.body.tools ?? []) for (const d of t.functionDeclarations ?? []) names.add(d.name);
    return names;
  },
  addTools(call, tools) {
    if (call.action !== 'generateContent') return;
    const decls = tools.map((t) => ({
      name: t.name,
      ...(t.description !== undefined ? { description: t.description } : {}),
      parametersJsonSchema: t.parameters,
    }));
    const list = call.body.tools ?? [];
    // One function-declarations tool: the caller's, extended; other tools (googleSearch, ...) stay as they are.
    const i = list.findIndex((t) => t.functionDeclarations !== undefined);
    call.body.tools =
      i < 0
        ? [...list, { functionDeclarations: decls }]
        : list.map((t, j) =>
            j === i ? { ...t, functionDeclarations: [...(t.functionDeclarations ?? []), ...decls] } : t,
          );
  },
  calls(res) {
    return functionCalls(res.body).map((fc, i) => ({
      // Gemini may leave the id out: the position names the call (next() answers in the same order).
      id: fc.id ?? `call_${i}`,
      name: fc.name,
      arguments: JSON.stringify(fc.args ?? {}),
    }));
  },
  next(call, res, outputs) {
    if (call.action !== 'generateContent') return call;
    const candidate = onlyCandidate(res.body);
    const turn = candidate && isRecord(candidate['content']) ? [modelTurn(candidate['content'])] : [];
    const parts = functionCalls(res.body).map((fc, i) => ({
      functionResponse: {
        ...(fc.id !== undefined ? { id: fc.id } : {}),
        name: fc.name,
        response: { result: outputs[i]?.output ?? '' },
      },
    }));
    const body: GenerateContentRequest = {
      ...call.body,
      contents: [...call.body.contents, ...turn, { role: 'user', parts }],
    };
    return { ...call, body };
  },
};

interface FunctionCall {
  id: string | undefined;
  name: string;
  args: unknown;
}

/** Several candidates are several conversations: the caller decides which one goes on. */
function onlyCandidate(body: JsonObject): JsonObject | undefined {
  const candidates = body['candidates'];
  if (!Array.isArray(candidates) || candidates.length !== 1) return undefined;
  return isRecord(candidates[0]) ? candidates[0] : undefined;
}

function functionCalls(body: JsonObject): FunctionCall[] {
  const content = onlyCandidate(body)?.['content'];
  const parts = isRecord(content) && Array.isArray(content['parts']) ? content['parts'] : [];
  const out: FunctionCall[] = [];
  for (const p of parts) {
    const fc = isRecord(p) ? p['functionCall'] : undefined;
    if (!isRecord(fc) || typeof fc['name'] !== 'string') continue;
    out.push({ id: typeof fc['id'] === 'string' ? fc['id'] : undefined, name: fc['name'], args: fc['args'] });
  }
  return out;
}

/** The candidate's content as a `model` turn, its parts as they came. */
function modelTurn(content: JsonObject): Content {
  const parts = Array.isArray(content['parts']) ? content['parts'].filter(isRecord) : [];
  return { role: 'model', parts };
}
