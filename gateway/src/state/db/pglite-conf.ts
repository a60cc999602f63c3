// Postgres settings of the embedded PGlite. Shared buffers live in the gateway's own WebAssembly memory, and
// every page of them is resident once used (stock 128 MB: ~120 MB of RSS). The gateway's tables are small or
// append-only (request logs and charges insert at the end of their indexes), so 4 MB (512 pages) holds the
// working set: a log COPY costs the same as with 16 MB, 12 MB less RSS (docs/benchmarks.md, issue 19);
// evicted pages go to the data directory's files (the OS page cache), not to resident memory.
export const PGLITE_CONF: string[] = ['shared_buffers = 4MB', 'maintenance_work_mem = 16MB', 'temp_buffers = 2MB'];
