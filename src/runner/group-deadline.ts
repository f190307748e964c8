interface Group {
  total: number;
  started: number;
  ended: number;
  abort: AbortController;
  timer?: NodeJS.Timeout;
}

/**
 * reward.judge.deadlineS: a group is judged once its rollouts have ended, so one straggler holds up its group. Once
 * every rollout of a group has started and one has ended, the others have `ms` to end; then they are stopped (failed
 * with the reason, left out of their group as failed rollouts are) and the group is judged without them.
 */
export class GroupDeadlines {
  private readonly groups = new Map<string, Group>();

  constructor(
    private readonly ms: number,
    jobs: readonly { groupId: string | null }[],
    private readonly parent: AbortSignal,
  ) {
    for (const { groupId } of jobs) {
      if (groupId === null) continue;
      const g = this.groups.get(groupId) ?? { total: 0, started: 0, ended: 0, abort: new AbortController() };
      g.total++;
      this.groups.set(groupId, g);
    }
  }

  /** The signal a starting rollout of `groupId` runs under: the run's, or its group's deadline. */
  start(groupId: string | null): AbortSignal {
    const g = groupId === null ? undefined : this.groups.get(groupId);
    if (!g) return this.parent;
    g.started++;
    this.arm(g);
    return AbortSignal.any([this.parent, g.abort.signal]);
  }

  end(groupId: string | null): void {
    const g = groupId === null ? undefined : this.groups.get(groupId);
    if (!g) return;
    g.ended++;
    if (g.ended === g.total) clearTimeout(g.timer);
    else this.arm(g);
  }

  private arm(g: Group): void {
    if (g.timer || g.ended === 0 || g.started < g.total) return;
    const reason = `stopped at the judge's deadline: the rest of its group had ended ${this.ms / 1000} s before`;
    g.timer = setTimeout(() => g.abort.abort(reason), this.ms);
    g.timer.unref();
  }
}
