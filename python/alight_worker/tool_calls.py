"""OpenAI tool calling on the worker's chat route, as vLLM does it with `--tool-call-parser hermes`: the request's
messages (tool calls and results included) and tools go to the model's chat template, and the model's text is read back
for `<tool_call>{"name": …, "arguments": {…}}</tool_call>` blocks, which become the answer's `tool_calls`.

A template without a tools branch renders the tools as nothing: the model then never learns they exist, which is the
model's limit, not the server's (the agent example ships a template that has one)."""

import json
import re
import uuid

_call = re.compile(r"<tool_call>(.*?)</tool_call>", re.DOTALL)


def _text(content):
    """A message's content as text: a string, or the text of its parts."""
    if isinstance(content, str):
        return content
    return "".join(p.get("text", "") for p in content or [] if isinstance(p, dict))


def _arguments(raw):
    """A call's arguments as a template expects them (an object, which it writes with `tojson`): OpenAI sends them as a
    JSON string. Text that is not JSON stays as it came."""
    if not isinstance(raw, str):
        return raw
    try:
        return json.loads(raw)
    except json.JSONDecodeError:
        return raw


def template_messages(messages):
    """OpenAI chat messages as chat templates read them: content as text, tool calls with their arguments as objects,
    a tool result with the id and name it answers."""
    out = []
    for m in messages:
        msg = {"role": m.get("role"), "content": _text(m.get("content"))}
        calls = m.get("tool_calls") or []
        if calls:
            msg["tool_calls"] = [
                {
                    "id": c.get("id"),
                    "type": "function",
                    "function": {
                        "name": (c.get("function") or {}).get("name"),
                        "arguments": _arguments((c.get("function") or {}).get("arguments")),
                    },
                }
                for c in calls
                if isinstance(c, dict)
            ]
        for key in ("tool_call_id", "name"):
            if m.get(key) is not None:
                msg[key] = m[key]
        out.append(msg)
    return out


def request_tools(body):
    """The request's tools for the template (None: no tools, or tool_choice "none")."""
    tools = body.get("tools")
    if not tools or body.get("tool_choice") == "none":
        return None
    return tools


def parse_calls(text):
    """The model's text as (content, tool_calls): every well-formed `<tool_call>` block a call, the text before the
    first one the content (None when there is none). A block that is not a JSON object with a string `name` leaves the
    whole text as content and no call, as vLLM's hermes parser does: a malformed call is the model's, shown as text."""
    blocks = _call.findall(text)
    if not blocks:
        return text, []
    calls = []
    for block in blocks:
        try:
            call = json.loads(block)
        except json.JSONDecodeError:
            return text, []
        if not isinstance(call, dict) or not isinstance(call.get("name"), str):
            return text, []
        arguments = call.get("arguments", {})
        calls.append(
            {
                "id": f"call_{uuid.uuid4().hex[:24]}",
                "type": "function",
                "function": {
                    "name": call["name"],
                    "arguments": arguments if isinstance(arguments, str) else json.dumps(arguments, ensure_ascii=False),
                },
            }
        )
    # The text before the first call kept as written, spaces too: the harness sends it back, and the next turn's prompt
    # then renders the very text the model sampled.
    content = text[: text.index("<tool_call>")]
    return content or None, calls
