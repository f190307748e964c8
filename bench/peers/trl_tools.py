"""The calculator agent (examples/calculator) as TRL's tool-calling GRPO sees it (issue 54's peer side).

TRL runs the episode loop in process (`GRPOTrainer(tools=[...])`: generate, parse the Hermes `<tool_call>`, call the
Python function, append the result as a tool turn, generate again; the tool's tokens masked out of the loss). What the
model sees is kept the same as through the harness: the Agents SDK's system instructions, and the tool listed in the
system turn exactly as the SDK sends it (the dict below, copied from a recorded request: its `$schema`, `strict` and
`additionalProperties` included), not as transformers would describe the Python function. The tool's results are the
harness's own (calculator.mjs, run by one long-lived node process), so both trainers read the same tool output.
"""

import json
import os
import subprocess
import threading

HERE = os.path.dirname(os.path.abspath(__file__))
EXAMPLE = os.path.join(HERE, "..", "..", "examples", "calculator")
DEFAULT_TRAIN = os.path.join(EXAMPLE, "train.jsonl")
# examples/calculator/harness.mjs's INSTRUCTIONS.
SYSTEM = "Use the calculator for arithmetic. Then reply with the result alone."
# The `function` of the Agents SDK 0.20's request for harness.mjs's tool (zod → JSON schema, strict mode).
TOOL = {
    "name": "calculate",
    "description": "The value of an arithmetic expression.",
    "parameters": {
        "$schema": "http://json-schema.org/draft-07/schema#",
        "type": "object",
        "properties": {"expression": {"type": "string"}},
        "required": ["expression"],
        "additionalProperties": False,
    },
    "strict": True,
}
# harness.mjs's maxTurns is 3 model turns: at most two calls before the answer, as TRL counts tool iterations.
MAX_TOOL_ITERATIONS = 2

_SERVE = """
import { createInterface } from 'node:readline';
import { calculate } from %s;
for await (const line of createInterface({ input: process.stdin }))
  console.log(JSON.stringify(calculate(JSON.parse(line))));
"""


class Calculator:
    """calculator.mjs's `calculate` behind one node process: an expression a line in, its value's text a line out."""

    def __init__(self):
        module = json.dumps("file://" + os.path.abspath(os.path.join(EXAMPLE, "calculator.mjs")))
        self._node = subprocess.Popen(
            ["node", "--input-type=module", "-e", _SERVE % module],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        self._lock = threading.Lock()

    def __call__(self, expression: str) -> str:
        with self._lock:
            self._node.stdin.write(json.dumps(str(expression)) + "\n")
            self._node.stdin.flush()
            return json.loads(self._node.stdout.readline())


def tool_function(calculator: Calculator):
    """The callable TRL calls; its name and docstring only identify it (the prompt shows TOOL)."""

    def calculate(expression: str) -> str:
        """The value of an arithmetic expression.

        Args:
            expression: the expression to evaluate.
        """
        return calculator(expression)

    return calculate


def prepare_tokenizer(tokenizer, grpo_trainer_module) -> None:
    """Hermes calls read back as the worker reads them, and the prompt's tool list as the harness sends it.

    The calculator's template is SmolLM2's ChatML with a Hermes tools branch, which TRL does not recognise by name;
    its Qwen3 response template parses the same `<tool_call>{json}</tool_call>` text. A call that is not JSON is text,
    as the worker's parser (python/alight_worker/tool_calls.py) and vLLM's hermes parser leave it: the episode ends
    there with that text as the answer, where TRL's parser would raise.
    """
    from trl.chat_template_utils import qwen3_template

    tokenizer.response_template = qwen3_template
    render = tokenizer.apply_chat_template

    def apply_chat_template(conversation, *args, tools=None, **kwargs):
        if tools:
            tools = [TOOL if callable(t) else t for t in tools]
        return render(conversation, *args, tools=tools, **kwargs)

    tokenizer.apply_chat_template = apply_chat_template
    parse = grpo_trainer_module.parse_response

    def parse_response(tok, ids, *args, **kwargs):
        try:
            return parse(tok, ids, *args, **kwargs)
        except Exception:  # noqa: BLE001 - any parse failure is the model's malformed call
            text = tok.decode(ids, skip_special_tokens=True)
            return {"role": "assistant", "content": text}

    grpo_trainer_module.parse_response = parse_response


def final_reply(completion) -> str:
    """The episode's answer: its last assistant turn's text when that turn makes no call (else none), as the SDK's
    `finalOutput` is."""
    last = completion[-1] if completion else {}
    if last.get("role") != "assistant" or last.get("tool_calls"):
        return ""
    return last.get("content") or ""


def tool_calls(completion) -> int:
    return sum(len(m.get("tool_calls") or []) for m in completion if m.get("role") == "assistant")
