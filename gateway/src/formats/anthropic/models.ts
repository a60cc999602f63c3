// Anthropic's model list shape (`{data: [{type:'model', id, display_name, created_at}], has_more, first_id,
// last_id}`) and its cursor paging (`limit`, `after_id`, `before_id`), over the models the gateway serves. Pure.

export interface AnthropicModel {
  type: 'model';
  id: string;
  display_name: string;
  created_at: string;
}

export interface ModelPage {
  data: AnthropicModel[];
  has_more: boolean;
  first_id: string | null;
  last_id: string | null;
}

/** The API's default page size. */
const DEFAULT_LIMIT = 20;

/**
 * A model as callers of this route name it: bare for the route's own provider (the SDK sends what it lists),
 * `<provider>/<model>` for the others.
 */
export function anthropicModel(provider: string, id: string, createdSec: number, ownProvider: string): AnthropicModel {
  const name = provider === ownProvider ? id : `${provider}/${id}`;
  return { type: 'model', id: name, display_name: name, created_at: new Date(createdSec * 1000).toISOString() };
}

/** One page: after `after_id`, or the page ending just before `before_id`; an unknown cursor gives an empty page. */
export function modelPage(
  models: readonly AnthropicModel[],
  q: { limit?: number | undefined; after_id?: string | undefined; before_id?: string | undefined },
): ModelPage {
  const limit = q.limit ?? DEFAULT_LIMIT;
  let start = 0;
  let end = models.length;
  if (q.after_id !== undefined) {
    const at = models.findIndex((m) => m.id === q.after_id);
    start = at === -1 ? models.length : at + 1;
    end = Math.min(models.length, start + limit);
  } else if (q.before_id !== undefined) {
    const at = models.findIndex((m) => m.id === q.before_id);
    end = at === -1 ? 0 : at;
    start = Math.max(0, end - limit);
  } else {
    end = Math.min(models.length, limit);
  }
  const data = models.slice(start, end);
  const hasMore = q.before_id !== undefined ? start > 0 : end < models.length;
  return { data, has_more: hasMore, first_id: data[0]?.id ?? null, last_id: data.at(-1)?.id ?? null };
}
