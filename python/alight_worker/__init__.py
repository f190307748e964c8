"""alight's Python worker: owns the policy's weights, serves it with token ids and logprobs, and runs the updates.

The TypeScript orchestrator starts it as `python -m alight_worker` and speaks newline-delimited JSON-RPC on its
stdin/stdout (docs/design.md#worker-protocol); logs go to stderr."""
