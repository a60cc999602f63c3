// What a Responses answer leaves stored at the provider (responsesOp.creates), whose owner the gateway records
// for a virtual key: a native answer's id unless the request said `store: false`; never a bridged answer's (the
// gateway made that id up and nothing holds it); in a stream, the id of the `response.created` event only. And
// the ids of its output items, which later requests name by id (a native provider resolves them; the bridge not).
import { describe, expect, it } from 'vitest';
import { chatOp, responsesOp } from '../../src/engine/operations.ts';
import type { ProviderAdapter } from '../../src/providers/types.ts';
import type { ResponsesResponse } from '../../src/schemas/responses.ts';

const creates = responsesOp.creates!;
const never = () => Promise.reject(new Error('not called'));
const native: ProviderAdapter = { name: 'openai', chat: never, responses: never, responsesStream: never };
const bridged: ProviderAdapter = { name: 'deepseek', chat: never, chatStream: never };
const unaryOnly: ProviderAdapter = { name: 'x', responses: never };

describe('responsesOp.creates', () => {
  it('stores a native answer unless the request says store: false', () => {
    expect(creates.kind).toBe('response');
    for (const store of [undefined, null, true]) {
      expect(creates.stores({ model: 'm', input: 'hi', store }, native, false)).toBe(true);
      expect(creates.stores({ model: 'm', input: 'hi', store }, native, true)).toBe(true);
    }
    expect(creates.stores({ model: 'm', input: 'hi', store: false }, native, false)).toBe(false);
    expect(creates.stores({ model: 'm', input: 'hi', store: false }, native, true)).toBe(false);
  });

  it('stores nothing when the answer comes through the chat bridge (per mode: whole or streamed)', () => {
    expect(creates.stores({ model: 'm', input: 'hi' }, bridged, false)).toBe(false);
    expect(creates.stores({ model: 'm', input: 'hi' }, bridged, true)).toBe(false);
    expect(creates.stores({ model: 'm', input: 'hi' }, unaryOnly, false)).toBe(true);
    expect(creates.stores({ model: 'm', input: 'hi' }, unaryOnly, true)).toBe(false);
  });

  it("reads a whole answer's id, and a stream's from its response.created event only", () => {
    const answer = (id: unknown) => ({ id, object: 'response', output: [] }) as unknown as ResponsesResponse;
    expect(creates.answerId(answer('resp_1'))).toBe('resp_1');
    expect(creates.answerId(answer(''))).toBeUndefined();
    expect(creates.answerId(answer(undefined))).toBeUndefined();

    expect(creates.chunkId({ type: 'response.created', response: { id: 'resp_2', status: 'in_progress' } })).toBe(
      'resp_2',
    );
    expect(creates.chunkId({ type: 'response.completed', response: { id: 'resp_2' } })).toBeUndefined();
    expect(creates.chunkId({ type: 'response.output_text.delta', delta: 'resp_3' })).toBeUndefined();
    expect(creates.chunkId({ type: 'response.created', response: 'resp_4' })).toBeUndefined();
    expect(creates.chunkId({ type: 'response.created' })).toBeUndefined();
  });

  it("reads the ids of an answer's output items, and those a stream's item and terminal events carry", () => {
    const parts = creates.parts!;
    expect(parts.kind).toBe('response_item');
    const answer = (output: unknown) => ({ id: 'resp_1', object: 'response', output }) as unknown as ResponsesResponse;
    expect(
      parts.answerIds(
        answer([
          { id: 'rs_1', type: 'reasoning', summary: [] },
          { id: 'msg_1', type: 'message', content: [] },
          { type: 'message' },
          { id: '', type: 'message' },
          { id: 'x'.repeat(257), type: 'message' },
        ]),
      ),
    ).toEqual(['rs_1', 'msg_1']);
    // Bounded: an answer with more items records the first `max`.
    const many = Array.from({ length: parts.max + 5 }, (_, i) => ({ id: `fc_${i}`, type: 'function_call' }));
    expect(parts.answerIds(answer(many))).toHaveLength(parts.max);

    expect(parts.chunkIds({ type: 'response.output_item.added', item: { id: 'msg_2', type: 'message' } })).toEqual([
      'msg_2',
    ]);
    expect(parts.chunkIds({ type: 'response.output_item.done', item: { id: 'msg_2', type: 'message' } })).toEqual([
      'msg_2',
    ]);
    expect(
      parts.chunkIds({
        type: 'response.completed',
        response: { id: 'resp_2', output: [{ id: 'msg_2' }, { id: 'ws_3' }] },
      }),
    ).toEqual(['msg_2', 'ws_3']);
    expect(parts.chunkIds({ type: 'response.created', response: { id: 'resp_2', output: [] } })).toBeUndefined();
    expect(parts.chunkIds({ type: 'response.output_text.delta', item_id: 'msg_2', delta: 'x' })).toBeUndefined();
  });

  it('holds a native attempt to every stored item named, a bridged one to none (the bridge reads no item by id)', () => {
    const refs = [
      { kind: 'response', id: 'resp_1' },
      { kind: 'response_item', id: 'rs_1' },
      { kind: 'file', id: 'file-a' },
    ];
    const at = responsesOp.referencesAt!;
    expect(at(refs, native, false)).toEqual(refs);
    expect(at(refs, native, true)).toEqual(refs);
    expect(at(refs, bridged, false)).toEqual([refs[0], refs[2]]);
    expect(at(refs, unaryOnly, true)).toEqual([refs[0], refs[2]]);
  });

  it('is declared only where an answer is stored (chat completions store nothing the gateway names)', () => {
    expect(chatOp.creates).toBeUndefined();
  });
});
