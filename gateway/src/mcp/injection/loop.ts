// The auto-execute loop, pure over its steps: call the model; when every call of its answer is one the gateway
// may run by itself, run them, append the turn and the outputs, and call the model again; at most `maxSteps`
// model calls. Any other answer (text, or a call the caller has to run) ends the loop as it is.
import type { ToolCallOut, ToolCodec, ToolOutput } from '../../formats/types.ts';

export interface LoopDeps<Req, Res, S extends { value: Res }> {
  codec: ToolCodec<Req, Res>;
  /** One model call (a full inference, charged and logged on its own); `n` counts from 1. */
  step(body: Req, n: number): Promise<S>;
  /** May the gateway run this call by itself? */
  autoExecutable(call: ToolCallOut): boolean;
  /** Runs one call; never throws: a failure is the text the model reads. */
  execute(call: ToolCallOut, n: number): Promise<string>;
  /** At least 1. */
  maxSteps: number;
  /** An answer with more calls than this goes back to the caller unexecuted (one answer's calls run at once). */
  maxCallsPerStep: number;
}

export interface LoopResult<S> {
  /** The last step's result: the answer the caller gets. */
  last: S;
  /** Model calls made. */
  steps: number;
  /** The last answer still asked for tools the gateway would have run, but the bound was reached. */
  boundReached: boolean;
}

export async function runToolLoop<Req, Res, S extends { value: Res }>(
  body: Req,
  d: LoopDeps<Req, Res, S>,
): Promise<LoopResult<S>> {
  let req = body;
  for (let n = 1; ; n++) {
    const last = await d.step(req, n);
    const calls = d.codec.calls(last.value);
    if (calls.length === 0 || calls.length > d.maxCallsPerStep || !calls.every((c) => d.autoExecutable(c))) {
      return { last, steps: n, boundReached: false };
    }
    if (n >= d.maxSteps) return { last, steps: n, boundReached: true };
    // One answer's calls are independent of each other (the model asked for them together): run them at once.
    const outputs: ToolOutput[] = await Promise.all(
      calls.map(async (c) => ({ id: c.id, name: c.name, output: await d.execute(c, n) })),
    );
    req = d.codec.next(req, last.value, outputs);
  }
}
