// What a streamed answer said, for the log's content column when content logging is on: the text (and tool calls)
// of each choice pieced together from the unified chunks as they pass, never holding the chunks themselves.
// A Responses stream ends with the whole response, which is kept as is. Bounded: past MAX_CHARS text is cut.

const MAX_CHARS = 512 * 1024;

type Json = Record<string, unknown>;

interface Choice {
  index: number;
  text: string;
  finish_reason: unknown;
  tool_calls: Map<number, { id: string; name: string; arguments: string }>;
}

function obj(v: unknown): Json | undefined {
  // Reads only; every field is checked before use.
  return v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Json) : undefined;
}

export class StreamContent {
  private readonly choices = new Map<number, Choice>();
  private final: unknown;
  private chars = 0;
  private truncated = false;
  private usage: unknown;

  add(chunk: unknown): void {
    const c = obj(chunk);
    if (!c) return;
    if (c['type'] === 'response.completed' || c['type'] === 'response.incomplete') {
      this.final = c['response'];
      return;
    }
    if (c['usage']) this.usage = c['usage'];
    const list = c['choices'];
    if (!Array.isArray(list)) return;
    for (const raw of list) {
      const ch = obj(raw);
      if (!ch) continue;
      const index = typeof ch['index'] === 'number' ? ch['index'] : 0;
      let choice = this.choices.get(index);
      if (!choice) {
        choice = { index, text: '', finish_reason: null, tool_calls: new Map() };
        this.choices.set(index, choice);
      }
      if (ch['finish_reason'] != null) choice.finish_reason = ch['finish_reason'];
      const delta = obj(ch['delta']);
      // Chat chunks carry delta.content; text completion chunks carry text.
      const piece = delta ? delta['content'] : ch['text'];
      if (typeof piece === 'string') this.append(choice, piece);
      const calls = delta?.['tool_calls'];
      if (Array.isArray(calls)) for (const call of calls) this.addCall(choice, obj(call));
    }
  }

  private append(choice: Choice, piece: string): void {
    if (this.chars >= MAX_CHARS) {
      this.truncated = true;
      return;
    }
    const room = MAX_CHARS - this.chars;
    const cut = piece.length > room ? piece.slice(0, room) : piece;
    if (cut.length < piece.length) this.truncated = true;
    choice.text += cut;
    this.chars += cut.length;
  }

  private addCall(choice: Choice, call: Json | undefined): void {
    if (!call) return;
    const i = typeof call['index'] === 'number' ? call['index'] : 0;
    let entry = choice.tool_calls.get(i);
    if (!entry) {
      entry = { id: '', name: '', arguments: '' };
      choice.tool_calls.set(i, entry);
    }
    if (typeof call['id'] === 'string') entry.id = call['id'];
    const fn = obj(call['function']);
    if (typeof fn?.['name'] === 'string') entry.name = fn['name'];
    if (typeof fn?.['arguments'] === 'string' && this.chars < MAX_CHARS) {
      entry.arguments += fn['arguments'];
      this.chars += fn['arguments'].length;
    }
  }

  /** The streamed answer as the log stores it; undefined when the chunks had no shape this knows. */
  result(): unknown {
    if (this.final !== undefined) return this.final;
    if (this.choices.size === 0) return undefined;
    const choices = [...this.choices.values()]
      .sort((a, b) => a.index - b.index)
      .map((c) => ({
        index: c.index,
        text: c.text,
        finish_reason: c.finish_reason,
        ...(c.tool_calls.size > 0 ? { tool_calls: [...c.tool_calls.values()] } : {}),
      }));
    return {
      streamed: true,
      choices,
      ...(this.usage ? { usage: this.usage } : {}),
      ...(this.truncated ? { truncated: true } : {}),
    };
  }
}
