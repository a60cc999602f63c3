// Lists served page by page with a continuation token (Gemini, Cohere model lists), collected into one list.

/** Safety stop for a list that never ends. */
const MAX_PAGES = 20;

export interface Page<T> {
  items: T[];
  /** Token of the next page; absent or empty on the last page. */
  next: string | undefined;
}

/** Fetches pages (the first without a token) until one has no next token, or MAX_PAGES were read. */
export async function collectPages<T>(fetchPage: (token: string | undefined) => Promise<Page<T>>): Promise<T[]> {
  const items: T[] = [];
  let token: string | undefined;
  for (let page = 0; page < MAX_PAGES; page++) {
    const res = await fetchPage(token);
    items.push(...res.items);
    token = res.next;
    if (!token) break;
  }
  return items;
}
