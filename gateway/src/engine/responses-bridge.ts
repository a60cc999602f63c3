// Serves the OpenAI Responses API through a provider that only has Chat Completions: pure translation of the
// request, the response and the stream. The pieces live in responses-bridge/; this is the entry callers import.
export { type BridgeResult, responsesToChat } from './responses-bridge/request.ts';
export { type BridgeIds, chatToResponses } from './responses-bridge/response.ts';
export { ChatToResponsesStream, chatStreamToResponses } from './responses-bridge/stream.ts';
