import cliProgress from 'cli-progress';

/** A progress bar per stage on a TTY (cli-progress), nothing otherwise; `stop` clears it. */
export function progressBars(
  enabled: boolean,
): ((e: { stage: string; done: number; total: number | null }) => void) & { stop(): void } {
  let bar: cliProgress.SingleBar | null = null;
  let stage = '';
  const update = (e: { stage: string; done: number; total: number | null }): void => {
    if (!enabled) return;
    if (e.stage !== stage) {
      bar?.stop();
      stage = e.stage;
      bar = new cliProgress.SingleBar(
        {
          format: e.total === null ? `${e.stage} {value} rows` : `${e.stage} [{bar}] {value}/{total}`,
          clearOnComplete: true,
          hideCursor: true,
        },
        cliProgress.Presets.shades_classic,
      );
      bar.start(e.total ?? 0, e.done);
    }
    bar!.update(e.done);
  };
  return Object.assign(update, { stop: () => bar?.stop() });
}
