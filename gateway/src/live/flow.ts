// What one live client is sent, given how much is still buffered for it: the backpressure accounting, pure.
// A slow reader stops getting log events (they are counted per log, and it is told how many of each it missed once
// it catches up); store updates still go; a reader that falls past the hard bound is closed.
import { LOG_KINDS, type LogKind, logsSkippedMessage } from './messages.ts';

export interface FlowBounds {
  /** Buffered bytes past which log events are counted instead of sent. */
  slowBytes: number;
  /** Buffered bytes past which the client is closed (1013). */
  hardBytes: number;
}

export const DEFAULT_FLOW_BOUNDS: FlowBounds = { slowBytes: 1024 * 1024, hardBytes: 8 * 1024 * 1024 };

export class ClientFlow {
  private readonly bounds: FlowBounds;
  /** Log events not sent since the client fell behind, per log. */
  private readonly missed: Record<LogKind, number> = { request: 0, mcp: 0 };
  constructor(bounds: FlowBounds) {
    this.bounds = bounds;
  }

  /** Log events of every log not sent since the client fell behind. */
  get skipped(): number {
    return this.missed.request + this.missed.mcp;
  }

  /**
   * The frames to send now for `message` (a log event of `kind`, or a store update when undefined), `buffered`
   * bytes being queued for the client; `close` when it is past the hard bound.
   */
  offer(buffered: number, message: string, kind: LogKind | undefined): readonly string[] | 'close' {
    if (buffered > this.bounds.hardBytes) return 'close';
    if (buffered > this.bounds.slowBytes) {
      if (kind === undefined) return [message];
      this.missed[kind]++;
      return [];
    }
    return [...this.takeNotices(), message];
  }

  /** `count` events of `kind` left out for every client (a batch held more rows than are sent): the frames to send. */
  skip(buffered: number, count: number, kind: LogKind): readonly string[] | 'close' {
    if (buffered > this.bounds.hardBytes) return 'close';
    this.missed[kind] += count;
    return buffered > this.bounds.slowBytes ? [] : this.takeNotices();
  }

  /** The client's buffer went down to `buffered` bytes: the notices of what it missed, once it is no longer slow. */
  drained(buffered: number): readonly string[] {
    return buffered > this.bounds.slowBytes ? [] : this.takeNotices();
  }

  /** One notice per log with missed events. */
  private takeNotices(): string[] {
    const notices: string[] = [];
    for (const kind of LOG_KINDS) {
      if (this.missed[kind] === 0) continue;
      notices.push(logsSkippedMessage(this.missed[kind], kind));
      this.missed[kind] = 0;
    }
    return notices;
  }
}
