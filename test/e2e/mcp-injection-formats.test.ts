// MCP tool injection and the auto-execute loop on a real gateway (Postgres + Redis) in the formats other than
// OpenAI's, each with its official SDK as the caller: Anthropic Messages (native and translated), the Gemini API
// (generateContent; embedContent gets no tools), Bedrock Converse and Cohere v2 chat (translated to chat). MCP SDK
// tool servers are the upstream tool servers, fakes the models. OpenAI's formats: mcp-injection.test.ts.
import Anthropic from '@anthropic-ai/sdk';
import { BedrockRuntimeClient, ConverseCommand } from '@aws-sdk/client-bedrock-runtime';
import { GoogleGenAI } from '@google/genai';
import { NodeHttpHandler } from '@smithy/node-http-handler';
import { CohereClientV2 } from 'cohere-ai';
import { describe, expect, it } from 'vitest';
import type { Json } from './governance-helpers.ts';
import { toolNames, useInjectionEnv } from './mcp-injection-helpers.ts';

const env = useInjectionEnv();

const body = (i: number): Json => env.openai.requests[i]?.json as Json; // the fake records parsed JSON bodies

describe('the Anthropic Messages format', () => {
  const client = () => new Anthropic({ baseURL: `${env.gw.url}/anthropic`, apiKey: env.keyA.value, maxRetries: 0 });
  const text = (m: Anthropic.Message) => m.content.map((b) => (b.type === 'text' ? b.text : '')).join('');

  it('native (anthropic): tools as input_schema tools, tool_use run, tool_result sent back', async () => {
    const m = await client().messages.create({
      model: 'claude-sonnet-4-5',
      max_tokens: 100,
      messages: [{ role: 'user', content: 'look it up' }],
    });
    const sent = (i: number): Json => env.anthropic.requests[i]?.json as Json; // the fake records parsed JSON bodies
    const first = sent(0);
    expect((first['tools'] as Json[]).map((t) => t['name'])).toEqual(['files-read', 'files-write', 'files-fail']);
    expect((first['tools'] as Json[])[0]).toEqual({
      name: 'files-read',
      description: 'echoes its arguments (read)',
      input_schema: { type: 'object', properties: { text: { type: 'string' } } },
    });
    // The fake calls the first tool with a sample of its schema; the gateway ran it.
    expect(env.files.calls).toEqual([expect.objectContaining({ tool: 'read', args: { text: 'fake' } })]);
    expect(env.anthropic.requests).toHaveLength(2);
    const messages = sent(1)['messages'] as Json[];
    expect(messages.map((x) => x['role'])).toEqual(['user', 'assistant', 'user']);
    const use = (messages[1]?.['content'] as Json[] | undefined)?.find((b) => b['type'] === 'tool_use');
    expect(messages[2]?.['content']).toEqual([
      { type: 'tool_result', tool_use_id: use?.['id'], content: 'read:{"text":"fake"}' },
    ]);
    expect(text(m)).toBe('tool result: read:{"text":"fake"}');
  });

  it('translated (<provider>/<model> on /anthropic): the loop runs through the chat translation', async () => {
    const m = await client().messages.create({
      model: 'openai/gpt-4o-mini',
      max_tokens: 100,
      messages: [{ role: 'user', content: 'translate me' }],
    });
    expect(env.files.calls).toEqual([expect.objectContaining({ tool: 'read', args: { query: 'translate me' } })]);
    expect(env.openai.requests).toHaveLength(2);
    expect((body(1)['messages'] as Json[]).at(-1)).toMatchObject({
      role: 'tool',
      content: 'read:{"query":"translate me"}',
    });
    expect(text(m)).toBe('Echo from gpt-4o-mini: translate me');
  });
});

describe('the Gemini API format', () => {
  const client = () => new GoogleGenAI({ apiKey: env.keyA.value, httpOptions: { baseUrl: `${env.gw.url}/genai` } });
  const sent = (i: number): Json => env.gemini.requests[i]?.json as Json; // the fake records parsed JSON bodies

  it('generateContent: declarations injected, functionCall run, functionResponse sent back', async () => {
    const r = await client().models.generateContent({ model: 'gemini-2.5-flash', contents: 'look it up' });
    const decls = ((sent(0)['tools'] as Json[] | undefined)?.[0]?.['functionDeclarations'] ?? []) as Json[];
    expect(decls.map((d) => d['name'])).toEqual(['files-read', 'files-write', 'files-fail']);
    expect(decls[0]).toEqual({
      name: 'files-read',
      description: 'echoes its arguments (read)',
      parametersJsonSchema: { type: 'object', properties: { text: { type: 'string' } } },
    });
    expect(env.files.calls).toEqual([expect.objectContaining({ tool: 'read', args: { text: 'look it up' } })]);
    expect(env.gemini.requests).toHaveLength(2);
    const contents = sent(1)['contents'] as Json[];
    expect(contents.slice(1)).toEqual([
      {
        role: 'model',
        parts: [
          {
            functionCall: { name: 'files-read', args: { text: 'look it up' } },
            thoughtSignature: 'c2lnbmF0dXJlLTE=',
          },
        ],
      },
      {
        role: 'user',
        parts: [{ functionResponse: { name: 'files-read', response: { result: 'read:{"text":"look it up"}' } } }],
      },
    ]);
    expect(r.text).toBe('tool said: [{"result":"read:{\\"text\\":\\"look it up\\"}"}]');
  });

  it('embedContent on the same route gets no tools and no loop', async () => {
    const r = await client().models.embedContent({ model: 'text-embedding-004', contents: 'hello' });
    expect(r.embeddings?.[0]?.values?.length).toBeGreaterThan(0);
    expect(sent(0)['tools']).toBeUndefined();
  });
});

describe('the Bedrock Converse format', () => {
  it('translated (<provider>/<model> on /cloudconv): toolSpec tools, the loop through the chat translation', async () => {
    const client = new BedrockRuntimeClient({
      endpoint: `${env.gw.url}/cloudconv`,
      region: 'us-east-1',
      token: { token: env.keyA.value },
      authSchemePreference: ['httpBearerAuth'],
      requestHandler: new NodeHttpHandler(),
      maxAttempts: 1,
    });
    const r = await client.send(
      new ConverseCommand({
        modelId: 'openai/gpt-4o-mini',
        messages: [{ role: 'user', content: [{ text: 'converse with tools' }] }],
      }),
    );
    expect(toolNames(body(0))).toEqual(['files-read', 'files-write', 'files-fail']);
    expect(env.files.calls).toEqual([
      expect.objectContaining({ tool: 'read', args: { query: 'converse with tools' } }),
    ]);
    expect(env.openai.requests).toHaveLength(2);
    expect((body(1)['messages'] as Json[]).at(-1)).toMatchObject({
      role: 'tool',
      content: 'read:{"query":"converse with tools"}',
    });
    expect(r.output?.message?.content?.map((b) => b.text ?? '').join('')).toBe(
      'Echo from gpt-4o-mini: converse with tools',
    );
  });
});

describe('the Cohere v2 chat format', () => {
  it('translated (<provider>/<model> on /cohere): function tools, the loop through the chat translation', async () => {
    const client = new CohereClientV2({ token: env.keyA.value, environment: `${env.gw.url}/cohere`, maxRetries: 0 });
    const r = await client.chat({
      model: 'openai/gpt-4o-mini',
      messages: [{ role: 'user', content: 'cohere with tools' }],
    });
    expect(toolNames(body(0))).toEqual(['files-read', 'files-write', 'files-fail']);
    expect(env.files.calls).toEqual([expect.objectContaining({ tool: 'read', args: { query: 'cohere with tools' } })]);
    expect(env.openai.requests).toHaveLength(2);
    expect((body(1)['messages'] as Json[]).at(-1)).toMatchObject({
      role: 'tool',
      content: 'read:{"query":"cohere with tools"}',
    });
    const text = (r.message.content ?? []).map((c) => (c.type === 'text' ? c.text : '')).join('');
    expect(text).toBe('Echo from gpt-4o-mini: cohere with tools');
  });
});
