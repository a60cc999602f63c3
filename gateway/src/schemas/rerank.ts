// Rerank in the unified shape (Cohere's, as the reference gateway serves it): a query and documents in, the
// documents' indexes ordered by relevance out. Documents are strings (Cohere) or `{text, id?, meta?}` objects.
import { z } from 'zod';

/** Cohere's own bound on documents per call; larger lists are refused before anything is sent. */
export const MAX_RERANK_DOCUMENTS = 10_000;

export const RerankDocument = z.union([
  z.string().min(1),
  z.looseObject({
    text: z.string().min(1),
    id: z.string().min(1).optional(),
    meta: z.record(z.string(), z.unknown()).optional(),
  }),
]);
export type RerankDocument = z.infer<typeof RerankDocument>;

export const RerankRequest = z.looseObject({
  model: z.string().min(1).describe('`<provider>/<model>`, e.g. `cohere/rerank-v3.5`'),
  query: z.string().min(1),
  documents: z.array(RerankDocument).min(1).max(MAX_RERANK_DOCUMENTS),
  top_n: z.number().int().min(1).optional(),
  return_documents: z.boolean().optional(),
  max_tokens_per_doc: z.number().int().min(1).optional(),
  priority: z.number().int().optional(),
  fallbacks: z.array(z.string()).optional(),
});
export type RerankRequest = z.infer<typeof RerankRequest>;

export interface RerankResult {
  index: number;
  relevance_score: number;
  /** With `return_documents: true`: the document as the caller sent it (`{text}` for a string). */
  document?: { text: string; id?: string | undefined; meta?: Record<string, unknown> | undefined };
}

export interface RerankResponse {
  id: string;
  model: string;
  results: RerankResult[];
  /** Cohere's billing record; `billed_units.search_units` is what a rerank is charged by. */
  meta?: { billed_units?: { search_units?: number } } & Record<string, unknown>;
}

/** The text of a document, whichever shape it came in. */
export function documentText(d: RerankDocument): string {
  return typeof d === 'string' ? d : d.text;
}

/** A result's `document` as the caller sent it, when asked for. */
export function resultDocument(req: RerankRequest, index: number): RerankResult['document'] {
  const d = req.documents[index];
  if (d === undefined) return undefined;
  return typeof d === 'string' ? { text: d } : { text: d.text, id: d.id, meta: d.meta };
}

/** Cohere's search unit: one query over up to 100 documents. */
export function searchUnits(documents: number): number {
  return Math.max(1, Math.ceil(documents / 100));
}
