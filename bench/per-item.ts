/**
 * Runs `start(0…n-1)`, `parallel` at a time, and returns the wall time and this process's CPU per item: how the
 * launcher benchmarks compare a way of starting work with its baseline.
 */
export async function perItem(
  n: number,
  parallel: number,
  start: (i: number) => Promise<unknown>,
): Promise<{ wallMs: number; cpuMs: number }> {
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: parallel }, async () => {
      while (next < n) await start(next++);
    }),
  );
  const cpu = process.cpuUsage(cpu0);
  return { wallMs: (performance.now() - t0) / n, cpuMs: (cpu.user + cpu.system) / 1000 / n };
}
