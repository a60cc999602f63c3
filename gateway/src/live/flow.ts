// What one live client is sent, given how much is still buffered for it: the backpressure accounting, pure.
// A slow reader stops getting log events (they are counted, and it is told how many it missed once it catches
// up); store updates still go; a reader that falls past the hard bound is closed.
import { logsSkippedMessage } from './messages.ts';

export interface FlowBounds {
  /** Buffered bytes past which log events are counted instead of sent. */
  slowBytes: number;
  /** Buffered bytes past which the client is closed (1013). */
  hardBytes: number;
}

export const DEFAULT_FLOW_BOUNDS: FlowBounds = { slowBytes: 1024 * 1024, hardBytes: 8 * 1024 * 1024 };

export class ClientFlow {
  private readonly bounds: FlowBounds;
  /** Log events not sent since the client fell behind. */
  skipped = 0;
  constructor(bounds: FlowBounds) {
    this.bounds = bounds;
  }

  /**
   * The frames to send now for `message` (a log event when `log`), `buffered` bytes being queued for the client;
   * `close` when it is past the hard bound.
   */
  offer(buffered: number, message: string, log: boolean): readonly string[] | 'close' {
    if (buffered > this.bounds.hardBytes) return 'close';
    if (buffered > this.bounds.slowBytes) {
      if (!log) return [message];
      this.skipped++;
      return [];
    }
    const notice = this.takeNotice();
    return notice === undefined ? [message] : [notice, message];
  }

  /** `count` log events left out for every client (a batch held more rows than are sent): the frames to send. */
  skip(buffered: number, count: number): readonly string[] | 'close' {
    if (buffered > this.bounds.hardBytes) return 'close';
    this.skipped += count;
    return buffered > this.bounds.slowBytes ? [] : this.frames(this.takeNotice());
  }

  /** The client's buffer went down to `buffered` bytes: the notice of what it missed, once it is no longer slow. */
  drained(buffered: number): string | undefined {
    return buffered > this.bounds.slowBytes ? undefined : this.takeNotice();
  }

  private takeNotice(): string | undefined {
    if (this.skipped === 0) return undefined;
    const notice = logsSkippedMessage(this.skipped);
    this.skipped = 0;
    return notice;
  }

  private frames(notice: string | undefined): readonly string[] {
    return notice === undefined ? [] : [notice];
  }
}
