// The matrix of a wire format's tests: one gateway in front of every provider family's fake (openai, anthropic,
// gemini, bedrock, cohere), each provider with one key for every model, the fakes reset before each test. The
// format's own family is named by a bare model (it goes to the format's provider), the others as
// `<provider>/<model>` (translated).
import { afterAll, beforeAll, beforeEach } from 'vitest';
import { createAnthropicFake } from '../fakes/anthropic.ts';
import { createBedrockFake } from '../fakes/bedrock.ts';
import { createCohereFake } from '../fakes/cohere.ts';
import { createGeminiFake } from '../fakes/gemini.ts';
import { createOpenAIFake } from '../fakes/openai.ts';
import type { FakeServer } from '../fakes/server.ts';
import { startTestGateway, type TestGateway } from '../harness/gateway.ts';
import { atFake } from './providers-helpers.ts';

export type Family = 'openai' | 'anthropic' | 'gemini' | 'bedrock' | 'cohere';

export interface MatrixTarget {
  family: Family;
  model: string;
  fake: () => FakeServer;
}

const MODELS: Record<Family, string> = {
  openai: 'gpt-4o-mini',
  anthropic: 'claude-haiku-4-5-20251001',
  gemini: 'gemini-2.5-flash',
  bedrock: 'anthropic.claude-3-5-sonnet-20240620-v1:0',
  cohere: 'command-a-03-2025',
};

const ACCESS_KEY = 'AKIAFMTMATRIX0000001';
const SECRET_KEY = 'fmt-secret-key-matrix-0123456789abcdefg';

/** Starts the fakes and the gateway for the file (vitest hooks); `own` is the format's own provider family. */
export function useProviderMatrix(own: Family): { gw: () => TestGateway; targets: MatrixTarget[] } {
  const fakes: Partial<Record<Family, FakeServer>> = {};
  let gw: TestGateway | undefined;
  beforeAll(async () => {
    const openai = await createOpenAIFake().start();
    const anthropic = await createAnthropicFake({ apiKey: 'sk-ant-matrix-aaaaaaaaaaaaaaaa' }).start();
    const gemini = await createGeminiFake().start();
    gemini.apiKey = 'AIza-matrix-aaaaaaaaaaaaaaaaaa';
    const bedrock = await createBedrockFake({ accessKey: ACCESS_KEY, secretKey: SECRET_KEY }).start();
    const cohere = await createCohereFake().start();
    cohere.apiKey = 'co-matrix-aaaaaaaaaaaaaaaaaaaaaa';
    Object.assign(fakes, { openai, anthropic, gemini, bedrock, cohere });
    const key = (id: string, value: string) => ({ id, name: id, value, models: ['*'] });
    gw = await startTestGateway({
      config: {
        providers: {
          openai: atFake(openai.url, key('oa', 'sk-openai-matrix-aaaaaaaa')),
          anthropic: atFake(anthropic.url, key('an', 'sk-ant-matrix-aaaaaaaaaaaaaaaa')),
          gemini: atFake(gemini.url, key('gm', gemini.apiKey)),
          bedrock: atFake(bedrock.url, {
            id: 'br',
            name: 'br',
            models: ['*'],
            bedrock_key_config: { access_key: ACCESS_KEY, secret_key: SECRET_KEY, region: 'eu-west-3' },
          }),
          cohere: atFake(cohere.url, key('co', cohere.apiKey)),
        },
      },
    });
  });
  afterAll(async () => {
    await gw?.close();
    await Promise.all(Object.values(fakes).map((f) => f.stop()));
  });
  beforeEach(() => {
    for (const f of Object.values(fakes)) f.reset();
  });
  const fakeOf = (family: Family) => () => {
    const f = fakes[family];
    if (!f) throw new Error(`the ${family} fake has not started`);
    return f;
  };
  const targets = (Object.keys(MODELS) as Family[]).map((family) => ({
    family,
    model: family === own ? MODELS[family] : `${family}/${MODELS[family]}`,
    fake: fakeOf(family),
  }));
  return {
    gw: () => {
      if (!gw) throw new Error('the gateway has not started');
      return gw;
    },
    targets,
  };
}
