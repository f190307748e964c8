"""Foreign conversations (recorded against another model or a hosted API) rendered with the student's chat template for
supervised fine-tuning, with the loss on exactly what the assistant says.

Where the assistant speaks is found by rendering, not by markers in the template: for the i-th message, an assistant
turn, the prompt is the conversation before it with the template's generation prompt, and its tokens are what
rendering the conversation up to and including it adds to that prompt. A template whose generation prompt is not where
its assistant turns begin, or that renders an assistant turn as nothing, cannot say where the assistant speaks: the
conversation is refused, never given an all-ones mask. When every turn's rendering is a prefix of the whole
conversation's, the conversation is one example with every assistant turn in the loss; when it is not (templates that
strip earlier turns' reasoning), each assistant turn is an example of its own whose prompt is what the model would
have been shown at that turn.

    python -m alight_worker.render_sft --tokenizer MODEL_DIR --in conversations.jsonl --out rendered.jsonl
"""

import argparse
import json


class Unrenderable(Exception):
    pass


def hf_messages(messages):
    """alight's messages (src/samples/conversation.ts) as chat templates take them: tool calls in OpenAI's shape with
    arguments as an object, so a template that writes them as JSON writes them once."""
    out = []
    for m in messages:
        msg = {"role": m["role"], "content": m.get("content", "")}
        if m.get("reasoning_content"):
            msg["reasoning_content"] = m["reasoning_content"]
        if m.get("tool_calls"):
            msg["tool_calls"] = [
                {"type": "function", "id": c["id"], "function": {"name": c["name"], "arguments": c["arguments"]}}
                for c in m["tool_calls"]
            ]
        if m.get("tool_call_id"):
            msg["tool_call_id"] = m["tool_call_id"]
        out.append(msg)
    return out


def _ids(tokenizer, messages, tools, generation_prompt):
    from jinja2 import TemplateError

    try:
        return list(
            tokenizer.apply_chat_template(
                messages, tools=tools or None, tokenize=True, add_generation_prompt=generation_prompt, return_dict=False
            )
        )
    except TemplateError as err:  # the template's own refusal (a role it does not know, a raise_exception)
        raise Unrenderable(f"the chat template refused the conversation: {err}") from err


def render(tokenizer, conversation):
    """[(ids, mask, prompt_length)]: one example, or one per assistant turn where the template is not
    prefix-preserving."""
    messages = hf_messages(conversation["messages"])
    tools = conversation.get("tools") or []
    turns = []
    for i, m in enumerate(messages):
        if m["role"] != "assistant":
            continue
        prompt = _ids(tokenizer, messages[:i], tools, True)
        upto = _ids(tokenizer, messages[: i + 1], tools, False)
        if upto[: len(prompt)] != prompt:
            raise Unrenderable(f"the template's generation prompt is not where assistant turn {i} begins")
        if len(upto) == len(prompt):
            raise Unrenderable(f"the template renders assistant turn {i} as nothing")
        turns.append((prompt, upto))
    if not turns:
        return []
    last = max(i for i, m in enumerate(messages) if m["role"] == "assistant")
    whole = _ids(tokenizer, messages[: last + 1], tools, False)
    if all(whole[: len(upto)] == upto for _, upto in turns):
        mask = [0] * len(whole)
        for prompt, upto in turns:
            mask[len(prompt) : len(upto)] = [1] * (len(upto) - len(prompt))
        return [(whole, mask, len(turns[0][0]))]
    return [(upto, [0] * len(prompt) + [1] * (len(upto) - len(prompt)), len(prompt)) for prompt, upto in turns]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tokenizer", required=True)
    parser.add_argument("--in", dest="source", required=True)
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(args.tokenizer)
    if not tokenizer.chat_template:
        raise SystemExit(f"{args.tokenizer} has no chat template: its tokenizer cannot render conversations")
    counts = {"rendered": 0, "refused": 0}
    with open(args.source) as source, open(args.out, "w") as out:
        for line in source:
            item = json.loads(line)
            try:
                examples = [e for c in item["conversations"] for e in render(tokenizer, c)]
                result = {"examples": [{"ids": ids, "mask": mask, "prompt_length": p} for ids, mask, p in examples]}
            except Unrenderable as err:
                result = {"error": str(err)}
            counts["refused" if "error" in result else "rendered"] += 1
            out.write(json.dumps({"id": item["id"], **result}) + "\n")
    print(json.dumps(counts))


if __name__ == "__main__":
    main()
