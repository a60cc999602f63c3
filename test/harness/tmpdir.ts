// Temp directories for tests, removed by the returned cleanup.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface TempDir {
  readonly path: string;
  write(name: string, content: string): Promise<void>;
  remove(): Promise<void>;
}

export async function tempDir(prefix = 'gw-test-'): Promise<TempDir> {
  const path = await mkdtemp(join(tmpdir(), prefix));
  return {
    path,
    write: (name, content) => writeFile(join(path, name), content),
    remove: () => rm(path, { recursive: true, force: true }),
  };
}
