// A package imported on first use, not at start: a gateway that never uses a feature (MCP, Bedrock signing, ...)
// does not carry its code (issue 19, docs/decisions.md). One import serves concurrent first callers; later callers
// read the loaded module without awaiting anything new.

export interface LazyModule<T> {
  /** The module, importing it the first time. */
  get(): Promise<T>;
  /** The module if it was imported already (e.g. to tell its error classes apart: none exist before it loads). */
  loaded(): T | undefined;
}

export function lazyModule<T>(load: () => Promise<T>): LazyModule<T> {
  let pending: Promise<T> | undefined;
  let value: T | undefined;
  return {
    get() {
      pending ??= load().then(
        (m) => {
          value = m;
          return m;
        },
        (err: unknown) => {
          // Not remembered: the next use tries again and reports its own failure.
          pending = undefined;
          throw err;
        },
      );
      return pending;
    },
    loaded: () => value,
  };
}
