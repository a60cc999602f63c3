// The CEL library (@bufbuild/cel with its protobuf runtime) adds about 8 MB of resident memory. Most
// gateways have no routing rule, so it is loaded on first need: when the read model holds a rule (the
// snapshot awaits it before publishing) or when the API validates a condition.
export type CelModule = typeof import('./routing-cel.ts');

let loaded: CelModule | undefined;
let loading: Promise<CelModule> | undefined;

/** Loads routing-cel.ts (and the CEL library) once. */
export function loadCel(): Promise<CelModule> {
  loading ??= import('./routing-cel.ts').then((m) => {
    loaded = m;
    return m;
  });
  return loading;
}

/** The CEL module if loadCel() has completed, else undefined. */
export function loadedCel(): CelModule | undefined {
  return loaded;
}
