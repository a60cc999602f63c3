// Child processes of the benchmark (mock upstream, pass-through, gateway) and what /proc says about
// them: resident memory and CPU time. Every child started here is stopped by stopAll(), also on exit.
import { type ChildProcess, fork, spawn } from 'node:child_process';
import { readdir, readFile } from 'node:fs/promises';

const children = new Set<ChildProcess>();

/** Kills every child still running (synchronous, for the exit path). */
export function killAllNow(): void {
  for (const child of children) {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  }
  children.clear();
}
process.on('exit', killAllNow);

export interface Child {
  proc: ChildProcess;
  pid: number;
  port: number;
}

interface ReadyMessage {
  type: 'ready';
  port: number;
}

function isReady(message: unknown): message is ReadyMessage {
  return (
    typeof message === 'object' &&
    message !== null &&
    'type' in message &&
    message.type === 'ready' &&
    'port' in message &&
    typeof message.port === 'number'
  );
}

/** Forks one of the bench's own servers; it reports its port over IPC once listening. */
export function forkServer(script: string, env: Record<string, string>, timeoutMs = 15_000): Promise<Child> {
  const proc = fork(script, [], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  children.add(proc);
  proc.once('exit', () => children.delete(proc));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      proc.kill('SIGKILL');
      reject(new Error(`${script} did not report ready within ${timeoutMs} ms`));
    }, timeoutMs);
    proc.once('exit', (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`${script} exited before it was ready (code ${code}, signal ${signal})`));
    });
    proc.on('message', (message) => {
      if (!isReady(message) || proc.pid === undefined) return;
      clearTimeout(timer);
      resolve({ proc, pid: proc.pid, port: message.port });
    });
  });
}

/** A spawned process whose output is kept (last lines) instead of printed. */
export interface Spawned {
  proc: ChildProcess;
  pid: number;
  /** Last output lines, newest last. */
  tail: string[];
  /** Output lines seen in total. */
  lines: number;
}

/** Runs `command` (default: this Node) with `args`, keeping only the last lines of its output. */
export function spawnQuiet(
  args: string[],
  env: Record<string, string>,
  cwd: string,
  command: string = process.execPath,
): Spawned {
  const proc = spawn(command, args, { env: { ...process.env, ...env }, cwd, stdio: 'pipe' });
  children.add(proc);
  proc.once('exit', () => children.delete(proc));
  const spawned: Spawned = { proc, pid: proc.pid ?? -1, tail: [], lines: 0 };
  const keep = (data: Buffer): void => {
    for (const line of data.toString().split('\n')) {
      if (line.trim() === '') continue;
      spawned.lines += 1;
      spawned.tail.push(line);
      if (spawned.tail.length > 40) spawned.tail.shift();
    }
  };
  proc.stdout?.on('data', keep);
  proc.stderr?.on('data', keep);
  return spawned;
}

export function exited(proc: ChildProcess): boolean {
  return proc.exitCode !== null || proc.signalCode !== null;
}

/** SIGTERM, then SIGKILL after `graceMs`. Resolves once the process is gone. */
export function stop(proc: ChildProcess, graceMs = 5_000): Promise<void> {
  if (exited(proc)) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(() => proc.kill('SIGKILL'), graceMs);
    proc.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
    proc.kill('SIGTERM');
  });
}

export async function stopAll(): Promise<void> {
  await Promise.all([...children].map((child) => stop(child)));
}

/** Resident set size of a process in bytes (VmRSS), or undefined when it is gone. */
export async function rssBytes(pid: number): Promise<number | undefined> {
  try {
    const status = await readFile(`/proc/${pid}/status`, 'utf8');
    const match = /^VmRSS:\s+(\d+)\s+kB/m.exec(status);
    return match ? Number(match[1]) * 1024 : undefined;
  } catch {
    return undefined;
  }
}

/** User + system CPU time of a process in ms (clock ticks are 100 Hz on Linux). */
export async function cpuMs(pid: number): Promise<number> {
  try {
    const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name, which is in parentheses and may contain spaces.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return Number.NaN;
  }
}

/**
 * Summed user + system CPU ms of the processes whose command line contains `needle`, and of their children
 * (Postgres's backends): e.g. this run's Redis or Postgres, told apart from others on the machine by port.
 */
export async function cpuMsMatching(needle: string): Promise<number> {
  const procs: { pid: number; ppid: number; ms: number; matches: boolean }[] = [];
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const cmdline = (await readFile(`/proc/${entry}/cmdline`, 'utf8')).replaceAll('\0', ' ');
      const stat = await readFile(`/proc/${entry}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      const ms = (Number(fields[11]) + Number(fields[12])) * 10;
      procs.push({ pid: Number(entry), ppid: Number(fields[1]), ms, matches: cmdline.includes(needle) });
    } catch {
      // gone meanwhile
    }
  }
  const roots = new Set(procs.filter((p) => p.matches).map((p) => p.pid));
  return procs.reduce((sum, p) => (roots.has(p.pid) || roots.has(p.ppid) ? sum + p.ms : sum), 0);
}

/** Busy CPU ms of the whole machine (all cores; /proc/stat, not idle or iowait). */
export async function machineBusyMs(): Promise<number> {
  const stat = await readFile('/proc/stat', 'utf8');
  const fields = (stat.split('\n')[0] ?? '').trim().split(/\s+/).slice(1).map(Number);
  const busy = fields.reduce((sum, v, i) => (i === 3 || i === 4 ? sum : sum + v), 0);
  return busy * 10;
}

/** Samples the RSS of a set of processes every `everyMs` and keeps each one's peak. */
export class RssSampler {
  private readonly peaks = new Map<number, number>();
  private timer: NodeJS.Timeout | undefined;
  private pids: number[] = [];

  watch(pids: number[], everyMs = 100): void {
    this.pids = pids;
    void this.sample();
    this.timer = setInterval(() => void this.sample(), everyMs);
  }

  async pause(): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    await this.sample();
  }

  peak(pid: number): number | undefined {
    return this.peaks.get(pid);
  }

  private async sample(): Promise<void> {
    for (const pid of this.pids) {
      const rss = await rssBytes(pid);
      if (rss !== undefined && rss > (this.peaks.get(pid) ?? 0)) this.peaks.set(pid, rss);
    }
  }
}
