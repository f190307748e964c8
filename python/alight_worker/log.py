import sys


def log(message):
    """A line on the worker's stderr, which alight keeps as .alight/runs/NAME/worker.log."""
    print(f"alight-worker: {message}", file=sys.stderr, flush=True)
