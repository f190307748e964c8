"""Writes `alight train`'s steps to experiment trackers, each through its own library.

Usage: python -m alight_trackers RUN_DIR TRACKER... (tensorboard, wandb, mlflow). Reads JSON lines on stdin:
{"kind": "start", "run": ..., "settings": {...}}, then {"kind": "step", "step": n, "metrics": {...}, "samples": [...]}
per step. A tracker that fails is reported on stderr (one line: `tracker NAME: why`) and left out from then on: the
others and the training go on. Ends at the end of stdin, closing each tracker.
"""

import json
import os
import signal
import sys


def numeric(metrics):
    return {k: float(v) for k, v in metrics.items() if isinstance(v, (int, float)) and not isinstance(v, bool)}


class TensorBoard:
    def __init__(self, run_dir, run, settings):
        from tensorboardX import SummaryWriter

        self.writer = SummaryWriter(logdir=os.path.join(run_dir, "tensorboard"))
        self.writer.add_text("settings", "```\n" + json.dumps(settings, indent=2) + "\n```", 0)

    def step(self, step, metrics, samples):
        for name, value in numeric(metrics).items():
            self.writer.add_scalar(name, value, step)
        if samples:
            rows = ["| prompt | answer | reward |", "|---|---|---|"]
            rows += [f"| {s['prompt']!r} | {s['answer']!r} | {s['reward']} |" for s in samples]
            self.writer.add_text("samples", "\n".join(rows), step)
        self.writer.flush()

    def close(self):
        self.writer.close()


class WandB:
    def __init__(self, run_dir, run, settings):
        import wandb

        # No key: offline, written under the run's folder for `wandb sync` later.
        if not os.environ.get("WANDB_API_KEY") and not os.environ.get("WANDB_MODE"):
            os.environ["WANDB_MODE"] = "offline"
        self.wandb = wandb
        self.run = wandb.init(
            project=os.environ.get("WANDB_PROJECT", "alight"), name=run, dir=run_dir, config=settings, reinit=True
        )

    def step(self, step, metrics, samples):
        data = numeric(metrics)
        if samples:
            data["samples"] = self.wandb.Table(
                columns=["prompt", "answer", "reward"], data=[[s["prompt"], s["answer"], s["reward"]] for s in samples]
            )
        self.run.log(data, step=step)

    def close(self):
        self.run.finish()


class MLflow:
    def __init__(self, run_dir, run, settings):
        import mlflow

        self.mlflow = mlflow
        uri = os.environ.get("MLFLOW_TRACKING_URI")
        if not uri:
            # A local file store beside the run, as MLflow's users know it; MLflow 3 keeps it but asks for an opt-in.
            uri = "file:" + os.path.join(run_dir, "mlruns")
            os.environ.setdefault("MLFLOW_ALLOW_FILE_STORE", "true")
        mlflow.set_tracking_uri(uri)
        mlflow.set_experiment(os.environ.get("MLFLOW_EXPERIMENT_NAME", "alight"))
        self.active = mlflow.start_run(run_name=run)
        flat = {k: json.dumps(v) if isinstance(v, (dict, list)) else v for k, v in settings.items()}
        mlflow.log_params({k: str(v)[:500] for k, v in flat.items()})

    def step(self, step, metrics, samples):
        self.mlflow.log_metrics(numeric(metrics), step=step)
        if samples:
            self.mlflow.log_dict({"step": step, "samples": samples}, f"samples/step-{step:06d}.json")

    def close(self):
        self.mlflow.end_run()


KINDS = {"tensorboard": TensorBoard, "wandb": WandB, "mlflow": MLflow}


def guarded(trackers, name, action):
    try:
        action(trackers[name])
    except Exception as err:  # noqa: BLE001 - any failure of a tracker is reported, never raised
        print(f"tracker {name}: {type(err).__name__}: {str(err).splitlines()[0] if str(err) else ''}", file=sys.stderr)
        sys.stderr.flush()
        del trackers[name]


def main():
    # alight ends the trackers by closing stdin, after its last step: a Ctrl-C meant for the training is not for us.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    run_dir, names = sys.argv[1], sys.argv[2:]
    trackers = {}
    for line in sys.stdin:
        msg = json.loads(line)
        if msg["kind"] == "start":
            for name in names:
                trackers[name] = None
                guarded(
                    trackers,
                    name,
                    lambda _t, n=name: trackers.__setitem__(n, KINDS[n](run_dir, msg["run"], msg["settings"])),
                )
        elif msg["kind"] == "step":
            for name in list(trackers):
                guarded(trackers, name, lambda t: t.step(msg["step"], msg["metrics"], msg.get("samples") or []))
    for name in list(trackers):
        guarded(trackers, name, lambda t: t.close())


if __name__ == "__main__":
    main()
