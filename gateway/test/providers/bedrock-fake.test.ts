// The fake Bedrock upstream speaks the real wire format: the official SDK's signed requests pass its SigV4
// check, and the SDK decodes its answers, including the binary ConverseStream event stream.
import {
  BedrockRuntimeClient,
  ConverseCommand,
  ConverseStreamCommand,
  CountTokensCommand,
  InvokeModelCommand,
} from '@aws-sdk/client-bedrock-runtime';
import { NodeHttpHandler } from '@smithy/node-http-handler';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type BedrockFake, createBedrockFake } from '../../../test/fakes/bedrock.ts';

const accessKeyId = 'AKIAFAKEFAKEFAKE';
const secretAccessKey = 'fake-secret-key/with+chars';

describe('bedrock fake against the official SDK', () => {
  let fake: BedrockFake;
  let client: BedrockRuntimeClient;

  beforeAll(async () => {
    fake = await createBedrockFake({ accessKey: accessKeyId, secretKey: secretAccessKey }).start();
    client = new BedrockRuntimeClient({
      region: 'us-east-1',
      endpoint: fake.url,
      credentials: { accessKeyId, secretAccessKey, sessionToken: 'session-token' },
      maxAttempts: 1,
      // The client defaults to HTTP/2 (for bidirectional streams); the fake, like many proxies, speaks HTTP/1.1.
      requestHandler: new NodeHttpHandler(),
    });
  });
  afterAll(async () => {
    client.destroy();
    await fake.stop();
  });

  it('accepts a signed Converse call and answers what the SDK parses', async () => {
    const modelId = 'arn:aws:bedrock:us-east-1:123456789012:application-inference-profile/abc123';
    const out = await client.send(
      new ConverseCommand({ modelId, messages: [{ role: 'user', content: [{ text: 'hello bedrock' }] }] }),
    );
    expect(out.output?.message?.content?.[0]?.text).toBe(`[${modelId}] hello bedrock`);
    expect(out.stopReason).toBe('end_turn');
    expect(out.usage?.inputTokens).toBeGreaterThan(0);
    expect(fake.last().path).toBe(`/model/${encodeURIComponent(modelId)}/converse`);
    expect(fake.last().headers['x-amz-security-token']).toBe('session-token');
  });

  it('streams text and tool use as an event stream the SDK decodes', async () => {
    const out = await client.send(
      new ConverseStreamCommand({
        modelId: 'anthropic.claude-3-haiku-20240307-v1:0',
        messages: [{ role: 'user', content: [{ text: 'weather?' }] }],
        toolConfig: {
          tools: [
            {
              toolSpec: {
                name: 'get_weather',
                inputSchema: { json: { type: 'object', properties: { city: { type: 'string' } } } },
              },
            },
          ],
        },
      }),
    );
    const events: string[] = [];
    let input = '';
    for await (const ev of out.stream ?? []) {
      events.push(Object.keys(ev).filter((k) => k !== '$unknown')[0] ?? '?');
      input += ev.contentBlockDelta?.delta?.toolUse?.input ?? '';
      if (ev.contentBlockStart) expect(ev.contentBlockStart.start?.toolUse?.name).toBe('get_weather');
      if (ev.messageStop) expect(ev.messageStop.stopReason).toBe('tool_use');
      if (ev.metadata) expect(ev.metadata.usage?.outputTokens).toBeGreaterThan(0);
    }
    expect(events).toEqual([
      'messageStart',
      'contentBlockStart',
      'contentBlockDelta',
      'contentBlockDelta',
      'contentBlockStop',
      'messageStop',
      'metadata',
    ]);
    expect(JSON.parse(input)).toEqual({ city: 'fake' });
  });

  it('sends a stream exception that the SDK throws as that exception', async () => {
    fake.options.streamException = { type: 'throttlingException', message: 'Too many tokens, please wait.' };
    const out = await client.send(
      new ConverseStreamCommand({ modelId: 'm', messages: [{ role: 'user', content: [{ text: 'a b c' }] }] }),
    );
    const consume = async () => {
      for await (const _ of out.stream ?? []) {
        // drain
      }
    };
    await expect(consume()).rejects.toMatchObject({
      name: 'ThrottlingException',
      message: 'Too many tokens, please wait.',
    });
  });

  it('embeds with Titan and Cohere through InvokeModel, and counts tokens', async () => {
    const titan = await client.send(
      new InvokeModelCommand({
        modelId: 'amazon.titan-embed-text-v2:0',
        contentType: 'application/json',
        body: JSON.stringify({ inputText: 'hi', dimensions: 256 }),
      }),
    );
    expect(JSON.parse(new TextDecoder().decode(titan.body)).embedding).toHaveLength(256);
    const cohere = await client.send(
      new InvokeModelCommand({
        modelId: 'cohere.embed-english-v3',
        body: JSON.stringify({ texts: ['a', 'b'], input_type: 'search_query' }),
      }),
    );
    expect(JSON.parse(new TextDecoder().decode(cohere.body)).embeddings).toHaveLength(2);
    const count = await client.send(
      new CountTokensCommand({
        modelId: 'anthropic.claude-3-haiku-20240307-v1:0',
        input: { converse: { messages: [{ role: 'user', content: [{ text: 'count me' }] }] } },
      }),
    );
    expect(count.inputTokens).toBeGreaterThan(0);
  });

  it('rejects a request signed with the wrong secret as InvalidSignatureException', async () => {
    const bad = new BedrockRuntimeClient({
      region: 'us-east-1',
      endpoint: fake.url,
      credentials: { accessKeyId, secretAccessKey: 'not-the-secret' },
      maxAttempts: 1,
      requestHandler: new NodeHttpHandler(),
    });
    try {
      await expect(
        bad.send(new ConverseCommand({ modelId: 'm', messages: [{ role: 'user', content: [{ text: 'x' }] }] })),
      ).rejects.toMatchObject({ name: 'InvalidSignatureException', $metadata: { httpStatusCode: 403 } });
    } finally {
      bad.destroy();
    }
  });
});
