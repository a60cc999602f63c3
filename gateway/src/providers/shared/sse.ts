// Server-sent events parsed incrementally from a byte stream: nothing is collected beyond one event.

export interface SseEvent {
  event: string | undefined;
  data: string;
}

export async function* parseSse(body: AsyncIterable<Uint8Array>): AsyncGenerator<SseEvent> {
  const decoder = new TextDecoder();
  let buf = '';
  let event: string | undefined;
  let data: string[] = [];
  for await (const chunk of body) {
    buf += decoder.decode(chunk, { stream: true });
    let nl = buf.indexOf('\n');
    while (nl !== -1) {
      let line = buf.slice(0, nl);
      buf = buf.slice(nl + 1);
      if (line.endsWith('\r')) line = line.slice(0, -1);
      if (line === '') {
        if (data.length > 0) yield { event, data: data.join('\n') };
        event = undefined;
        data = [];
      } else if (!line.startsWith(':')) {
        const colon = line.indexOf(':');
        const field = colon === -1 ? line : line.slice(0, colon);
        let value = colon === -1 ? '' : line.slice(colon + 1);
        if (value.startsWith(' ')) value = value.slice(1);
        if (field === 'data') data.push(value);
        else if (field === 'event') event = value;
      }
      nl = buf.indexOf('\n');
    }
  }
  buf += decoder.decode();
  if (buf.length > 0 && buf.startsWith('data:')) data.push(buf.slice(5).trimStart());
  if (data.length > 0) yield { event, data: data.join('\n') };
}

/** JSON payloads of an SSE stream, stopping at the OpenAI-style `[DONE]` sentinel. */
export async function* parseSseJson<T>(
  body: AsyncIterable<Uint8Array>,
): AsyncGenerator<{ event: string | undefined; data: T }> {
  for await (const ev of parseSse(body)) {
    if (ev.data === '[DONE]') return;
    // The caller names the event shape; providers check the fields they read.
    yield { event: ev.event, data: JSON.parse(ev.data) as T };
  }
}
