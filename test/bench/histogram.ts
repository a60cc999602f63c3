// Log-linear latency histogram in whole microseconds (HdrHistogram's layout, 3 significant digits):
// exact below 2,048 µs, then 1,024 linear buckets per power of two (<= 0.1 % error). Recording is
// O(1) and allocation-free, so the load generator can record every request without skewing itself.

const SUB_BITS = 10;
const SUB = 1 << SUB_BITS; // 1,024
const MAX_US = 0x7fffffff; // about 35 minutes; larger values are clamped
const MAX_SHIFT = 31 - SUB_BITS;
const SIZE = (MAX_SHIFT + 2) * SUB;

export interface Summary {
  count: number;
  mean: number;
  p50: number;
  p90: number;
  p99: number;
  p999: number;
  max: number;
}

export class Histogram {
  private readonly counts = new Uint32Array(SIZE);
  count = 0;
  private sum = 0;
  private maxUs = 0;

  /** Records one value given in milliseconds (as from performance.now() differences). */
  recordMs(ms: number): void {
    this.recordUs(Math.round(ms * 1000));
  }

  recordUs(valueUs: number): void {
    const v = valueUs < 0 ? 0 : Math.min(valueUs, MAX_US);
    this.counts[indexOf(v)]! += 1;
    this.count += 1;
    this.sum += v;
    if (v > this.maxUs) this.maxUs = v;
  }

  /** Adds every value recorded by `other` (to pool the slices of an interleaved measurement). */
  add(other: Histogram): void {
    for (let i = 0; i < SIZE; i++) this.counts[i]! += other.counts[i]!;
    this.count += other.count;
    this.sum += other.sum;
    if (other.maxUs > this.maxUs) this.maxUs = other.maxUs;
  }

  /** How many recorded values are below `us` (to bucket precision). */
  countBelow(us: number): number {
    let n = 0;
    const end = indexOf(Math.max(0, Math.min(Math.round(us), MAX_US)));
    for (let i = 0; i < end; i++) n += this.counts[i]!;
    return n;
  }

  /** Value (µs) at or below which `percent` % of the recorded values fall. */
  percentile(percent: number): number {
    if (this.count === 0) return 0;
    const rank = Math.max(1, Math.ceil((percent / 100) * this.count));
    let seen = 0;
    for (let i = 0; i < SIZE; i++) {
      seen += this.counts[i]!;
      if (seen >= rank) return Math.min(bucketValue(i), this.maxUs);
    }
    return this.maxUs;
  }

  summary(): Summary {
    return {
      count: this.count,
      mean: this.count === 0 ? 0 : Math.round(this.sum / this.count),
      p50: this.percentile(50),
      p90: this.percentile(90),
      p99: this.percentile(99),
      p999: this.percentile(99.9),
      max: this.maxUs,
    };
  }
}

function indexOf(v: number): number {
  if (v < 2 * SUB) return v;
  const shift = 31 - Math.clz32(v) - SUB_BITS;
  return shift * SUB + (v >>> shift);
}

/** Middle of the bucket's range (exact for the linear part). */
function bucketValue(index: number): number {
  if (index < 2 * SUB) return index;
  const shift = Math.floor(index / SUB) - 1;
  const low = (index - shift * SUB) * 2 ** shift;
  return low + Math.floor((2 ** shift - 1) / 2);
}
