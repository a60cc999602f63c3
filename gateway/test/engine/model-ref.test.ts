// Model names reach upstream URL paths (Gemini, Vertex, Bedrock, Azure deployments): a name that would move the
// call to another path or change the URL is refused with 400 invalid_request before anything is sent.
import { describe, expect, it } from 'vitest';
import { checkModelName, MAX_MODEL_CHARS, modelNameProblem, parseModelRef } from '../../src/engine/model-ref.ts';
import { GatewayError } from '../../src/http/errors.ts';

const VALID = [
  'gpt-4o-mini',
  'gemini-2.5-flash',
  'tunedModels/my-tune',
  'meta-llama/Llama-3.1-8B-Instruct',
  'anthropic.claude-3-5-sonnet-20240620-v1:0',
  'arn:aws:bedrock:us-east-1:123456789012:inference-profile/us.anthropic.claude-3-5-sonnet-20240620-v1:0',
  'ft:gpt-4o-mini-2024-07-18:my-org:suffix:abc123',
  '@cf/meta/llama-3-8b-instruct',
  'llama3:8b',
  'anthropic/claude-3.5-sonnet:beta',
  'v1.2..3',
];

const INVALID: [string, string][] = [
  ['a/../../../internal/admin', '".." path segment'],
  ['..', '".." path segment'],
  ['./x', '"." path segment'],
  ['x/.', '"." path segment'],
  ['a//b', 'empty path segment'],
  ['x/', 'empty path segment'],
  ['x?alt=json', '"?"'],
  ['x#frag', '"#"'],
  ['%2e%2e', '"%"'],
  ['a\\..\\b', '"\\\\"'],
  ['gpt 4o', '" "'],
  ['gpt\t4o', '"\\t"'],
  ['gpt\n4o', '"\\n"'],
  ['gpt\u0000', '"\\u0000"'],
  ['gpt\u007f', '"\u007f"'],
  ['gpt\u00a0x', '"\u00a0"'],
  ['gpt\u2028x', '"\u2028"'],
  ['a<b>', '"<"'],
  ['a{b}', '"{"'],
  ['a|b', '"|"'],
  ['a"b', '"\\""'],
];

describe('model names', () => {
  it.each(VALID)('accepts %s', (name) => {
    expect(modelNameProblem(name)).toBeUndefined();
    expect(parseModelRef(`p/${name}`)).toEqual({ provider: 'p', model: name });
  });

  it.each(INVALID)('refuses %j with 400 invalid_request naming the problem', (name, problem) => {
    expect(modelNameProblem(name)).toContain(problem);
    let err: unknown;
    try {
      parseModelRef(`gemini/${name}`, 'fallbacks[1]');
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(GatewayError);
    expect(err).toMatchObject({ code: 'invalid_request', status: 400, param: 'fallbacks[1]' });
    expect((err as GatewayError).message).toContain(problem);
  });

  it.each(['gem\u0000ini', 'gem ini', 'a?b'])('refuses the provider name %j with 400 invalid_request', (p) => {
    expect(() => parseModelRef(`${p}/x`)).toThrow(/provider name contains/);
  });

  it('refuses names longer than the bound', () => {
    expect(modelNameProblem('m'.repeat(MAX_MODEL_CHARS))).toBeUndefined();
    expect(() => checkModelName('m'.repeat(MAX_MODEL_CHARS + 1))).toThrow(/longer than 512/);
  });

  it('quotes a bad reference with its control characters escaped', () => {
    expect(() => parseModelRef('gpt\r\nx')).toThrow('got "gpt\\r\\nx"');
  });
});
