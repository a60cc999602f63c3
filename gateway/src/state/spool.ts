// A directory of append-only files where a pod keeps what Postgres could not take while it was unreachable
// (budget charges, request logs), so it survives the process being killed; drained once Postgres answers.
// docs/decisions.md says why a local spool and not a Redis stream.
//
// Files: `<kind>-<pid>-<boot>.live` is the file this process appends to; `<kind>-<pid>-<boot>-<seq>.ready` are
// files it took over to drain: its own live file, rotated, or a file left by a process that is gone (killed,
// or a previous container of this pod). A file whose process still runs is never touched, so processes may
// share the directory; the pid test covers one machine, which is what a pod's directory is.
import { createHash, randomBytes } from 'node:crypto';
import { mkdir, open, readdir, readFile, rename, unlink } from 'node:fs/promises';
import { join } from 'node:path';

/**
 * The spool directory for one database: `<dataDir>/spool/<tag>`, the tag a digest of the URL without its
 * password. Processes that share a data directory but write to different databases (several gateways on one
 * host, test runs) never drain each other's rows into the wrong database.
 */
export function spoolDirFor(dataDir: string, databaseUrl: string): string {
  let identity = databaseUrl;
  try {
    const u = new URL(databaseUrl);
    identity = `${u.protocol}//${u.username}@${u.host}${u.pathname}${u.search}`;
  } catch {
    // Not a URL (a libpq keyword string): the whole string names the database.
  }
  return join(dataDir, 'spool', createHash('sha256').update(identity).digest('hex').slice(0, 16));
}

/** Boot ids of the spools open in this process: in-process gateways (tests) share the pid. */
const OPEN_BOOTS = new Set<string>();

export interface DirSpoolOptions {
  dir: string;
  /** File name prefix, e.g. `charges`, `logs` (letters only). */
  kind: string;
  /** Whether a process of that id runs (tests replace it). */
  isAlive?: (pid: number) => boolean;
  /** A live file is set aside for draining once it holds this much, so no drain reads a huge file. 8 MiB. */
  maxFileBytes?: number;
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it exists but belongs to another user.
    return errorCode(error) === 'EPERM';
  }
}

function errorCode(error: unknown): unknown {
  return error instanceof Error && 'code' in error ? error.code : undefined;
}

export class DirSpool {
  readonly dir: string;
  readonly #kind: string;
  readonly #pid = process.pid;
  readonly #boot = randomBytes(6).toString('hex');
  readonly #isAlive: (pid: number) => boolean;
  readonly #name: RegExp;
  #seq = 0;
  /** Appends and drains run one at a time, so a rotation never races an append. */
  #chain: Promise<unknown> = Promise.resolve();
  /** Something may be waiting: this process appended, or files may be left by others (until a drain). */
  #maybePending = true;
  #made = false;
  readonly #maxFileBytes: number;
  #liveBytes = 0;
  /** Bytes this process appended since its last complete drain. */
  appendedBytes = 0;

  constructor(options: DirSpoolOptions) {
    if (!/^[a-z]+$/.test(options.kind)) throw new RangeError(`spool kind must be lowercase letters: ${options.kind}`);
    this.dir = options.dir;
    this.#kind = options.kind;
    this.#isAlive = options.isAlive ?? processAlive;
    this.#maxFileBytes = options.maxFileBytes ?? 8 * 1024 * 1024;
    this.#name = new RegExp(`^${options.kind}-(\\d+)-([0-9a-f]+)(?:-\\d+\\.ready|\\.live)$`);
    OPEN_BOOTS.add(this.#boot);
  }

  /** False once a drain found nothing left (until the next append). */
  get maybePending(): boolean {
    return this.#maybePending;
  }

  get #mine(): string {
    return `${this.#kind}-${this.#pid}-${this.#boot}`;
  }

  #serial<T>(fn: () => Promise<T>): Promise<T> {
    const next = this.#chain.then(fn, fn);
    this.#chain = next.catch(() => undefined);
    return next;
  }

  /** Resolves once the data is on disk (written and fdatasync'ed). */
  append(data: string | Uint8Array): Promise<void> {
    if (data.length === 0) return Promise.resolve();
    return this.#serial(async () => {
      if (!this.#made) {
        await mkdir(this.dir, { recursive: true });
        this.#made = true;
      }
      this.#maybePending = true;
      const live = join(this.dir, `${this.#mine}.live`);
      if (this.#liveBytes > 0 && this.#liveBytes + data.length > this.#maxFileBytes) {
        await rename(live, join(this.dir, `${this.#mine}-${this.#seq++}.ready`));
        this.#liveBytes = 0;
      }
      const file = await open(live, 'a');
      try {
        await file.writeFile(data);
        await file.datasync();
      } finally {
        await file.close();
      }
      this.appendedBytes += data.length;
      this.#liveBytes += data.length;
    });
  }

  /**
   * Takes over this process's live file and the files of processes that are gone, then hands each file's
   * content to `consume` (which must be idempotent: a drain that dies before the delete runs again) and deletes
   * it. Stops at the first failure; what is left stays on disk. Returns the number of files consumed.
   */
  drain(consume: (data: Buffer) => Promise<void>): Promise<number> {
    return this.#serial(async () => {
      let names: string[];
      try {
        names = await readdir(this.dir);
      } catch (error) {
        if (errorCode(error) !== 'ENOENT') throw error;
        this.#maybePending = false;
        return 0;
      }
      const mine = this.#mine;
      for (const name of names) {
        const m = this.#name.exec(name);
        if (m === null || name.startsWith(`${mine}-`)) continue;
        const [pid, boot] = [Number(m[1]), m[2] ?? ''];
        if (boot === this.#boot) this.#liveBytes = 0;
        const gone = boot === this.#boot || (!OPEN_BOOTS.has(boot) && (pid === this.#pid || !this.#isAlive(pid)));
        if (!gone) continue;
        // rename is atomic: of two processes taking over the same orphan, one gets it, the other ENOENT.
        await rename(join(this.dir, name), join(this.dir, `${mine}-${this.#seq++}.ready`)).catch((error: unknown) => {
          if (errorCode(error) !== 'ENOENT') throw error;
        });
      }
      const ready = (await readdir(this.dir)).filter((n) => n.startsWith(`${mine}-`) && n.endsWith('.ready'));
      for (const name of ready) {
        const path = join(this.dir, name);
        await consume(await readFile(path));
        await unlink(path);
      }
      this.#maybePending = false;
      this.appendedBytes = 0;
      return ready.length;
    });
  }

  /** This process stops using the directory (its files are then another process's to take over). */
  close(): void {
    OPEN_BOOTS.delete(this.#boot);
  }
}
