// Type parsers shared by both drivers so the same SQL returns the same JavaScript values on Postgres and PGlite.

/** OIDs of the types whose default parsing differs between `pg` and PGlite. */
export const OID = { bytea: 17, int8: 20, int8Array: 1016, date: 1082 } as const;

/** int8 (count(*), bigserial): a number when it fits exactly, else a bigint (never a lossy number). */
export function parseInt8(text: string): number | bigint {
  const value = BigInt(text);
  return value >= BigInt(Number.MIN_SAFE_INTEGER) && value <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(value) : value;
}

/** date: midnight UTC (pg's default would use the process time zone); infinities as +-Infinity like timestamps. */
export function parseDate(text: string): Date | number {
  if (text === 'infinity') return Number.POSITIVE_INFINITY;
  if (text === '-infinity') return Number.NEGATIVE_INFINITY;
  return new Date(text);
}

/** bytea in hex output format (`\x0102`): a Buffer, as `pg` returns. */
export function parseBytea(text: string): Buffer {
  return Buffer.from(text.slice(2), 'hex');
}
