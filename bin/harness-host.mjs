// A warm harness host (`runner: pool`, src/runner/pool-launcher.ts): one Node process that runs a Node harness's
// episodes one after another, each as the module evaluated anew (an import with the rollout in its query string), so
// that what the harness imports (an agent SDK, its HTTP client) loads once per host, not once per rollout. Each
// episode gets what a process of its own would have: the harness contract's variables in process.env (and only its
// own), its argv, its folder, its stdout and stderr in its log files, and an exit code. It ends as a process would:
// when process.exit is called, or when its module has been evaluated and nothing it started keeps the event loop
// alive. An episode that leaves work running (it exited early), or that threw where no one caught it, ends the host
// after its answer (the pool starts a fresh one), so that nothing of one episode reaches the next.
//
// Protocol: an episode a JSON line on stdin; its end a line on stdout, `<nonce> {"id", "code", "recycle"}`, where the
// nonce came in ALIGHT_HOST_NONCE (a harness writing to fd 1 itself cannot forge an end).
import { closeSync, openSync, writeSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { pathToFileURL } from 'node:url';

const nonce = process.env.ALIGHT_HOST_NONCE;
delete process.env.ALIGHT_HOST_NONCE;
const home = process.cwd();
const realExit = process.exit.bind(process);
const writes = { stdout: process.stdout.write, stderr: process.stderr.write };
const say = (message) => writeSync(1, `${nonce} ${JSON.stringify(message)}\n`);

class Exit extends Error {}

/** The episode running now: how to end it. */
let current = null;
process.exit = (code) => {
  throw new Exit(String(code ?? process.exitCode ?? 0));
};
for (const event of ['uncaughtException', 'unhandledRejection'])
  process.on(event, (error) => {
    if (!current) {
      writes.stderr.call(process.stderr, `harness host: ${error?.stack ?? error}\n`);
      realExit(70);
    }
    current.end(error);
  });

// What keeps the loop alive besides an episode's own work: our stdin, and the interval that watches for its end.
const ours = (r) => r === 'PipeWrap' || r === 'TTYWrap';
const idle = (watching) => {
  const left = process.getActiveResourcesInfo().filter((r) => !ours(r));
  return left.length === (watching ? 1 : 0);
};

function redirect(stream, file) {
  if (file === null) return () => {};
  const fd = openSync(file, 'a');
  process[stream].write = (chunk, encoding, done) => {
    writeSync(
      fd,
      typeof chunk === 'string' ? Buffer.from(chunk, typeof encoding === 'string' ? encoding : 'utf8') : chunk,
    );
    (typeof encoding === 'function' ? encoding : done)?.();
    return true;
  };
  return () => {
    process[stream].write = writes[stream];
    closeSync(fd);
  };
}

/** Runs one episode to its end: its exit code, and whether the host must go (the episode left work or threw). */
async function episode(job) {
  const restore = [redirect('stdout', job.stdout), redirect('stderr', job.stderr)];
  const added = Object.keys(job.env).filter((k) => !(k in process.env));
  const before = Object.fromEntries(Object.keys(job.env).map((k) => [k, process.env[k]]));
  Object.assign(process.env, job.env);
  process.argv = [process.execPath, job.file, ...job.args];
  process.exitCode = undefined;
  process.chdir(job.cwd ?? home);
  const ended = new Promise((resolve) => {
    current = { end: resolve };
  });
  import(`${pathToFileURL(job.file).href}?alight-rollout=${encodeURIComponent(job.id)}`).then(
    () => settle(current),
    (error) => current.end(error),
  );
  const how = await ended;
  current = null;
  let code = 0;
  let recycle = false;
  if (how instanceof Exit) {
    code = Number(how.message) || 0;
    recycle = !idle(false);
  } else if (how !== undefined) {
    process.stderr.write(`${how?.stack ?? how}\n`);
    [code, recycle] = [1, true];
  } else code = Number(process.exitCode ?? 0);
  for (const undo of restore) undo();
  for (const k of added) delete process.env[k];
  for (const [k, v] of Object.entries(before)) if (v !== undefined) process.env[k] = v;
  return { code, recycle };
}

/** Ends `episode` once nothing it started keeps the loop alive (the watching interval aside). */
function settle(episode) {
  const watch = setInterval(() => {
    if (current === episode && !idle(true)) return;
    clearInterval(watch);
    if (current === episode) episode.end(undefined);
  }, 2);
}

for await (const line of createInterface({ input: process.stdin })) {
  const job = JSON.parse(line);
  const { code, recycle } = await episode(job);
  say({ id: job.id, code, recycle });
  if (recycle) realExit(0);
}
