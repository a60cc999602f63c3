// The provider-held resources (files, containers, stored responses and their items) an inference request names
// in its body, so a virtual key can be held to its own (engine/resource-owners.ts) before the provider, which
// holds every tenant's resources behind the gateway's keys, reads one to it. Only the known places are read,
// each with a few property reads: a request that names nothing allocates nothing. Each walker takes the body the
// engine runs (OperationSpec.references): the unified one where a format decodes into it, the native one where it
// is passed through.
import { isRecord } from '../util/records.ts';
import type { ResourceRef } from './resource-ref.ts';
import { inputItemReferences, RESPONSE_ITEM } from './response-items.ts';

type Refs = ResourceRef[] | undefined;
/** A message of a chat or Anthropic body: only its content is read. */
type Message = { content?: unknown; [field: string]: unknown };

/**
 * A Gemini Files API URI (`https://generativelanguage.googleapis.com/v1beta/files/abc`, on any host, since a
 * proxy or test base URL answers with its own). Its `files/abc` is the file a Gemini call reads.
 */
const GEMINI_FILE_URI = /^https?:\/\/[^/?#]+\/v1(?:beta|alpha)?\/files\/([A-Za-z0-9_-]+)\/?$/;
/** Any other URL names something outside the gateway's records (an https page, YouTube, Cloud Storage). */
const URL_SCHEME = /^[A-Za-z][A-Za-z0-9+.-]*:\/\//;

function push(out: Refs, kind: string, id: string): Refs {
  if (out) out.push({ kind, id });
  else out = [{ kind, id }];
  return out;
}

/** A file id as a caller wrote it; a Gemini file URI is its `files/<id>`, other URLs name no provider file. */
function addFile(out: Refs, id: unknown): Refs {
  if (typeof id !== 'string' || id === '') return out;
  if (!URL_SCHEME.test(id)) return push(out, 'file', id);
  const gemini = GEMINI_FILE_URI.exec(id);
  return gemini ? push(out, 'file', `files/${gemini[1]}`) : out;
}

function addContainer(out: Refs, id: unknown): Refs {
  return typeof id === 'string' && id !== '' ? push(out, 'container', id) : out;
}

// OpenAI chat completions (and the chat-shaped count tokens): `{type: "file", file: {file_id}}` parts, in any
// message's content. A chat `file_id` reaches OpenAI and Azure as is, and Gemini as a part's fileUri.

export function chatReferences(req: { messages: readonly Message[] }): readonly ResourceRef[] | undefined {
  let out: Refs;
  for (const m of req.messages) {
    const content = m.content;
    if (!Array.isArray(content)) continue;
    for (const part of content) {
      if (isRecord(part) && part['type'] === 'file' && isRecord(part['file']))
        out = addFile(out, part['file']['file_id']);
    }
  }
  return out;
}

// OpenAI Responses: the stored response `previous_response_id` continues (its owner is recorded when a virtual
// key creates it, OperationSpec.creates) and the stored `conversation` it joins; input items the provider resolves
// by id from stored responses (`item_reference`, reasoning without its encrypted content, hosted tool calls:
// response-items.ts); `input_file` / `input_image` parts of messages, of tool outputs and of a stored prompt's
// variables; the code interpreter's container (an id, or `{type: "auto", file_ids}`); image generation's mask.

export function responsesReferences(req: {
  input?: unknown;
  tools?: unknown;
  prompt?: unknown;
  previous_response_id?: unknown;
  conversation?: unknown;
}): readonly ResourceRef[] | undefined {
  let out: Refs;
  const previous = req.previous_response_id;
  if (typeof previous === 'string' && previous !== '') out = push(out, 'response', previous);
  // A stored conversation (an id, or `{id}`). No route of the gateway creates one, so no virtual key owns one:
  // it is refused to them (fail closed), and gateway tokens pass it on.
  const conversation = isRecord(req.conversation) ? req.conversation['id'] : req.conversation;
  if (typeof conversation === 'string' && conversation !== '') out = push(out, 'conversation', conversation);
  if (Array.isArray(req.input)) {
    for (const item of req.input) {
      if (!isRecord(item)) continue;
      const type = item['type'];
      if (type === undefined || type === 'message') out = inputParts(out, item['content']);
      else if (type === 'function_call_output' || type === 'custom_tool_call_output') {
        out = inputParts(out, item['output']);
      }
      const stored = inputItemReferences(item);
      if (stored) for (const id of stored) out = push(out, RESPONSE_ITEM, id);
    }
  }
  if (Array.isArray(req.tools)) for (const tool of req.tools) out = responsesTool(out, tool);
  const variables = isRecord(req.prompt) ? req.prompt['variables'] : undefined;
  if (isRecord(variables)) for (const v of Object.values(variables)) out = inputPart(out, v);
  return out;
}

function inputParts(out: Refs, content: unknown): Refs {
  if (Array.isArray(content)) for (const part of content) out = inputPart(out, part);
  return out;
}

function inputPart(out: Refs, part: unknown): Refs {
  if (!isRecord(part)) return out;
  const type = part['type'];
  return type === 'input_file' || type === 'input_image' ? addFile(out, part['file_id']) : out;
}

function responsesTool(out: Refs, tool: unknown): Refs {
  if (!isRecord(tool)) return out;
  if (tool['type'] === 'code_interpreter') {
    const container = tool['container'];
    if (typeof container === 'string') return addContainer(out, container);
    const ids = isRecord(container) ? container['file_ids'] : undefined;
    if (Array.isArray(ids)) for (const id of ids) out = addFile(out, id);
    return out;
  }
  if (tool['type'] === 'image_generation' && isRecord(tool['input_image_mask'])) {
    return addFile(out, tool['input_image_mask']['file_id']);
  }
  return out;
}

// Videos: a create's reference image by file id; a remix passes its other fields on, so one is read there too.

export function videoCreateReferences(req: {
  reference?: { kind: string; fileId?: string } | undefined;
}): readonly ResourceRef[] | undefined {
  const ref = req.reference;
  return ref?.kind === 'file_id' ? addFile(undefined, ref.fileId) : undefined;
}

export function videoRemixReferences(req: { extra: Record<string, unknown> }): readonly ResourceRef[] | undefined {
  const ref = req.extra['input_reference'];
  return isRecord(ref) ? addFile(undefined, ref['file_id']) : undefined;
}

// OCR (Mistral's shape): a document given as `{type: "file", file_id}`.

export function ocrReferences(req: { document: unknown }): readonly ResourceRef[] | undefined {
  const doc = req.document;
  return isRecord(doc) && doc['type'] === 'file' ? addFile(undefined, doc['file_id']) : undefined;
}

// Anthropic Messages (`/anthropic`, and its count tokens): `document` and `image` blocks with a `file` source,
// `container_upload` blocks (a file for code execution), those inside tool results, and the `container` the code
// execution tool runs in (an id, or `{id, skills}`).

export function messagesReferences(req: {
  messages: readonly Message[];
  container?: unknown;
}): readonly ResourceRef[] | undefined {
  let out: Refs;
  for (const m of req.messages) out = messageBlocks(out, m.content, true);
  const container = req.container;
  out = addContainer(out, isRecord(container) ? container['id'] : container);
  return out;
}

function messageBlocks(out: Refs, content: unknown, outer: boolean): Refs {
  if (!Array.isArray(content)) return out;
  for (const block of content) {
    if (!isRecord(block)) continue;
    const type = block['type'];
    if (type === 'document' || type === 'image') {
      const source = block['source'];
      if (isRecord(source) && source['type'] === 'file') out = addFile(out, source['file_id']);
    } else if (type === 'container_upload') {
      out = addFile(out, block['file_id']);
    } else if (type === 'tool_result' && outer) {
      out = messageBlocks(out, block['content'], false);
    }
  }
  return out;
}

// Gemini (`/genai`): `fileData.fileUri` parts naming a Files API file (`files/abc` or its URI), in every method's
// contents and system instruction.

export function genaiReferences(call: { action: string; body: unknown }): readonly ResourceRef[] | undefined {
  const body = call.body;
  if (!isRecord(body)) return undefined;
  switch (call.action) {
    case 'generateContent':
      return generateContent(undefined, body);
    case 'embedContent':
      return contentParts(undefined, body['content']);
    case 'batchEmbedContents': {
      let out: Refs;
      const requests = body['requests'];
      if (Array.isArray(requests)) for (const r of requests) if (isRecord(r)) out = contentParts(out, r['content']);
      return out;
    }
    case 'countTokens': {
      const inner = body['generateContentRequest'];
      return generateContent(isRecord(inner) ? generateContent(undefined, inner) : undefined, body);
    }
    default:
      return undefined;
  }
}

function generateContent(out: Refs, body: Record<string, unknown>): Refs {
  const contents = body['contents'];
  if (Array.isArray(contents)) for (const c of contents) out = contentParts(out, c);
  return contentParts(out, body['systemInstruction']);
}

function contentParts(out: Refs, content: unknown): Refs {
  const parts = isRecord(content) ? content['parts'] : undefined;
  if (!Array.isArray(parts)) return out;
  for (const part of parts) {
    const data = isRecord(part) ? part['fileData'] : undefined;
    if (isRecord(data)) out = addFile(out, data['fileUri']);
  }
  return out;
}
