/** A limit on harness processes shared by several runs of rollouts at once (the async groups of a training run). */
export class Slots {
  private readonly waiting: (() => void)[] = [];

  constructor(private free: number) {}

  async acquire(): Promise<void> {
    if (this.free > 0) {
      this.free--;
      return;
    }
    await new Promise<void>((resolve) => this.waiting.push(resolve));
  }

  release(): void {
    const next = this.waiting.shift();
    if (next) next();
    else this.free++;
  }
}
