import cliProgress from 'cli-progress';
import { asLines, MB, PROGRESS_MIN_BYTES, type SetupListener } from '../setup/events.js';

/** Set-up progress on stderr: a bar per download over 5 MB on a TTY, else lines (asLines). */
export function setupProgress(stream: NodeJS.WriteStream = process.stderr): SetupListener {
  const lines = asLines((line) => stream.write(`alight: ${line}\n`));
  if (!stream.isTTY) return lines;
  let bar: cliProgress.SingleBar | null = null;
  return (e) => {
    if (e.type === 'step') return lines(e);
    if (e.type === 'download-end') {
      bar?.stop();
      bar = null;
    } else if (e.total >= PROGRESS_MIN_BYTES) {
      if (!bar) {
        bar = new cliProgress.SingleBar(
          { stream, format: `  ${e.file} [{bar}] {value}/{total} MB`, hideCursor: true },
          cliProgress.Presets.shades_classic,
        );
        bar.start(Math.round(e.total / MB), 0);
      }
      bar.update(Math.round(e.done / MB));
    }
  };
}
