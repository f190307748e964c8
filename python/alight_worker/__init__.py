"""alight's Python worker: owns the policy's weights, serves it with token ids and logprobs, and runs the updates.

The TypeScript orchestrator starts it as `python -m alight_worker` and speaks newline-delimited JSON-RPC on its
stdin/stdout (DESIGN §7); logs go to stderr."""
