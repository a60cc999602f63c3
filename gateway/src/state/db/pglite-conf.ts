// Postgres settings of the embedded PGlite. The stock 128 MB of shared buffers live in the gateway's own
// WebAssembly memory (~120 MB of RSS); the gateway's tables are small or append-only (request logs and
// charges insert at the end of their indexes), so 16 MB holds the working set and evicted pages go to the
// data directory's files (the OS page cache), not to resident memory.
export const PGLITE_CONF: string[] = ['shared_buffers = 16MB', 'maintenance_work_mem = 16MB', 'temp_buffers = 2MB'];
