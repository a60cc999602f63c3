// Anthropic's model list paging over the gateway's models.
import { describe, expect, it } from 'vitest';
import { anthropicModel, modelPage } from '../../../src/formats/anthropic/models.ts';

const models = ['a', 'b', 'c', 'd', 'e'].map((id) => anthropicModel('anthropic', id, 0, 'anthropic'));

describe('modelPage', () => {
  it('pages forward with after_id and backward with before_id', () => {
    expect(modelPage(models, { limit: 2 })).toMatchObject({ has_more: true, first_id: 'a', last_id: 'b' });
    expect(modelPage(models, { limit: 2, after_id: 'b' })).toMatchObject({
      has_more: true,
      first_id: 'c',
      last_id: 'd',
    });
    expect(modelPage(models, { limit: 2, after_id: 'd' })).toMatchObject({
      has_more: false,
      first_id: 'e',
      last_id: 'e',
    });
    expect(modelPage(models, { limit: 2, before_id: 'e' })).toMatchObject({
      has_more: true,
      first_id: 'c',
      last_id: 'd',
    });
    expect(modelPage(models, { limit: 2, before_id: 'b' })).toMatchObject({
      has_more: false,
      first_id: 'a',
      last_id: 'a',
    });
    expect(modelPage(models, { after_id: 'zz' })).toEqual({ data: [], has_more: false, first_id: null, last_id: null });
  });

  it('names other providers’ models <provider>/<model>', () => {
    expect(anthropicModel('openai', 'gpt-4o', 0, 'anthropic')).toEqual({
      type: 'model',
      id: 'openai/gpt-4o',
      display_name: 'openai/gpt-4o',
      created_at: '1970-01-01T00:00:00.000Z',
    });
  });
});
