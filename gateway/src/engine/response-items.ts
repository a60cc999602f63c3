// The items of stored Responses. A provider with a Responses API (OpenAI, Azure) keeps each output item of a
// stored response under its own id (`msg_…`, `rs_…`, `fc_…`, `ws_…`, …) and resolves a later request's input items
// by that id across the whole account: an `item_reference` is replaced by the stored item, and a reasoning item
// given without its encrypted content is filled in from the store. The account is every tenant behind the
// gateway's key, so the ids a virtual key's answer carries are recorded as its own (created-resources.ts) and the
// ids its requests name must be among them (referenced-resources.ts). Pure reads of plain data.
import { isRecord } from '../util/records.ts';

/** The owner record's kind of a stored response's output item. */
export const RESPONSE_ITEM = 'response_item';

/**
 * The most output items recorded for one response. An agentic answer (many tool calls) stays well under it; the
 * bound keeps one write, and the ids a long stream collects, small. Items past it answer 404 to virtual keys
 * (fail closed).
 */
export const MAX_RECORDED_ITEMS = 512;

/** Longer ids are not the provider's (OpenAI's are ~50 characters); they are not recorded. */
const MAX_ITEM_ID = 256;

function itemId(item: unknown): string | undefined {
  const id = isRecord(item) ? item['id'] : undefined;
  return typeof id === 'string' && id !== '' && id.length <= MAX_ITEM_ID ? id : undefined;
}

/** The ids of a response's `output` items (at most MAX_RECORDED_ITEMS). */
export function outputItemIds(output: unknown): string[] {
  const ids: string[] = [];
  if (!Array.isArray(output)) return ids;
  for (const item of output) {
    const id = itemId(item);
    if (id !== undefined) ids.push(id);
    if (ids.length >= MAX_RECORDED_ITEMS) break;
  }
  return ids;
}

/**
 * The output item ids a stream event carries: the item of `response.output_item.added` / `.done`, and the whole
 * output of a terminal event (which repeats them, and holds any an event did not announce).
 */
export function eventItemIds(ev: Record<string, unknown>): string[] | undefined {
  const type = ev['type'];
  if (type === 'response.output_item.added' || type === 'response.output_item.done') {
    const id = itemId(ev['item']);
    return id === undefined ? undefined : [id];
  }
  if (type === 'response.completed' || type === 'response.incomplete' || type === 'response.failed') {
    const resp = ev['response'];
    return isRecord(resp) ? outputItemIds(resp['output']) : undefined;
  }
  return undefined;
}

/**
 * Input item types whose content the caller sends whole: the provider takes it as given (an `id` on them is at
 * most matched against the store), so they name nothing stored. Any other item carrying an id is resolved by it:
 * `item_reference`, the hosted tools' calls (web and file search, code interpreter, image generation, computer,
 * MCP, shell, ...; their stored results are more than an answer shows) and types added later (fail closed).
 */
const SENT_WHOLE = new Set([
  'message',
  'function_call',
  'function_call_output',
  'custom_tool_call',
  'custom_tool_call_output',
  'computer_call_output',
  'local_shell_call_output',
  'shell_call_output',
  'apply_patch_call_output',
  'mcp_approval_response',
  'tool_search_output',
  'configuration_update',
]);

/** Types whose content is carried encrypted: given `encrypted_content`, nothing is read from the store. */
const ENCRYPTED = new Set(['reasoning', 'compaction']);

/**
 * The stored items one Responses input item names by id (none for most): the referenced or id-resolved item
 * itself, and the approval request an `mcp_approval_response` answers.
 */
export function inputItemReferences(item: Record<string, unknown>): string[] | undefined {
  const type = item['type'];
  if (type === 'mcp_approval_response') {
    const request = item['approval_request_id'];
    return typeof request === 'string' && request !== '' ? [request] : undefined;
  }
  const id = item['id'];
  if (typeof id !== 'string' || id === '') return undefined;
  // An item_reference may omit its type (the SDK's `type?: 'item_reference' | null`); a role makes it a message.
  if (type === undefined || type === null) return item['role'] === undefined ? [id] : undefined;
  if (typeof type !== 'string' || SENT_WHOLE.has(type)) return undefined;
  if (ENCRYPTED.has(type)) {
    const content = item['encrypted_content'];
    return typeof content === 'string' && content !== '' ? undefined : [id];
  }
  return [id];
}
