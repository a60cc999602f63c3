// Model prices: the shipped table and the lookup that layers pricing overrides over it.
export {
  lookupPrice,
  modelCandidates,
  type PriceContext,
  type PriceLookup,
  type PriceSource,
  tablePrice,
} from './lookup.ts';
export { PREFIXED_SOURCES, PRICE_TABLE, TABLE_SOURCES } from './table.ts';
