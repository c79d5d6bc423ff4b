/** Events per second over the last minute, counted in one-second buckets. */
export class Rate {
  private readonly buckets = new Float64Array(60);
  private second = 0;
  total = 0;

  constructor(private readonly now: () => number) {}

  add(n: number): void {
    this.advance();
    this.buckets[this.second % 60] += n;
    this.total += n;
  }

  /** The mean rate over the last 60 seconds. */
  perSecond(): number {
    this.advance();
    let sum = 0;
    for (const b of this.buckets) sum += b;
    return Math.round((sum / 60) * 100) / 100;
  }

  private advance(): void {
    const second = Math.floor(this.now() / 1000);
    if (second === this.second) return;
    // Buckets of the seconds that passed with nothing counted are emptied (all of them after a minute).
    for (let s = Math.max(this.second + 1, second - 59); s <= second; s++) this.buckets[s % 60] = 0;
    this.second = second;
  }
}
