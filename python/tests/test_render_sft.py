"""Foreign conversations rendered for SFT (alight_worker/render_sft.py) with the tiny model's character tokenizer and
three templates written here: ChatML with tools, the same stripping earlier turns' reasoning, and one whose generation
prompt is not where its assistant turns begin. Every system, user and tool text is upper case and every assistant text
lower case, so a masked token that decodes to an upper-case letter is a token the assistant did not say."""

import json
import pathlib

import pytest

from alight_worker.render_sft import Unrenderable, hf_messages, render
from alight_worker.tiny import CHAT_TEMPLATE, make_tokenizer

# Written for these tests (test/fixtures/chat-templates/, also read by test/e2e/sft-foreign.test.ts): ChatML with
# tools, and the same keeping reasoning only in the turns after the last user message, as thinking models' templates do.
TEMPLATES = pathlib.Path(__file__).resolve().parents[2] / "test" / "fixtures" / "chat-templates"
PLAIN = (TEMPLATES / "chatml-tools.jinja").read_text()
THINK = (TEMPLATES / "chatml-think.jinja").read_text()
MISPLACED = CHAT_TEMPLATE.replace("{{ m['role'] }}", "{{ 'model' if m['role'] == 'assistant' else m['role'] }}")

TOOLS = [{"type": "function", "function": {"name": "look", "parameters": {"type": "object", "properties": {}}}}]


def call(i, name="look", **arguments):
    return {"id": f"c{i}", "name": name, "arguments": arguments}


CONVERSATIONS = {
    "plain text": [
        {"role": "system", "content": "BE BRIEF"},
        {"role": "user", "content": "HI"},
        {"role": "assistant", "content": "hello there"},
    ],
    "parallel tool calls": [
        {"role": "user", "content": "LOOK TWICE"},
        {"role": "assistant", "content": "", "tool_calls": [call(1, path="a"), call(2, path="b")]},
        {"role": "tool", "content": "FILE A", "tool_call_id": "c1"},
        {"role": "tool", "content": "FILE B", "tool_call_id": "c2"},
        {"role": "assistant", "content": "both seen"},
    ],
    "a tool error": [
        {"role": "user", "content": "LOOK"},
        {"role": "assistant", "content": "ok", "tool_calls": [call(1, path="x")]},
        {"role": "tool", "content": "ERROR: NO SUCH FILE", "tool_call_id": "c1"},
        {"role": "assistant", "content": "it is missing"},
    ],
    "empty content with a tool call": [
        {"role": "user", "content": "GO"},
        {"role": "assistant", "content": "", "tool_calls": [call(1)]},
        {"role": "tool", "content": "DONE", "tool_call_id": "c1"},
        {"role": "assistant", "content": "done"},
    ],
    "reasoning content": [
        {"role": "user", "content": "ADD TWO AND TWO"},
        {"role": "assistant", "content": "four", "reasoning_content": "two plus two"},
    ],
    "a system message mid-conversation": [
        {"role": "user", "content": "START"},
        {"role": "assistant", "content": "started"},
        {"role": "system", "content": "NOW BE LOUD"},
        {"role": "user", "content": "AGAIN"},
        {"role": "assistant", "content": "again"},
    ],
    "several turns": [
        {"role": "user", "content": "ONE"},
        {"role": "assistant", "content": "one", "reasoning_content": "first"},
        {"role": "user", "content": "TWO"},
        {"role": "assistant", "content": "two", "reasoning_content": "second"},
        {"role": "user", "content": "THREE"},
        {"role": "assistant", "content": "three", "reasoning_content": "third"},
    ],
    "a tool result, then the user": [
        {"role": "user", "content": "CHECK"},
        {"role": "assistant", "content": "", "tool_calls": [call(1, q="z")]},
        {"role": "tool", "content": "RESULT", "tool_call_id": "c1"},
        {"role": "user", "content": "AND SO"},
        {"role": "assistant", "content": "so it is"},
    ],
}


def tokenizer_with(template):
    t = make_tokenizer()
    t.chat_template = template
    return t


def ids_of(t, messages, generation_prompt):
    return list(
        t.apply_chat_template(
            hf_messages(messages),
            tools=TOOLS,
            tokenize=True,
            add_generation_prompt=generation_prompt,
            return_dict=False,
        )
    )


@pytest.mark.parametrize("name", list(CONVERSATIONS))
@pytest.mark.parametrize("template", [PLAIN, CHAT_TEMPLATE], ids=["chatml-tools", "chatml-no-markers"])
def test_only_the_assistant_is_in_the_loss(name, template):
    t = tokenizer_with(template)
    messages = CONVERSATIONS[name]
    [(ids, mask, prompt_length)] = render(t, {"messages": messages, "tools": TOOLS})
    # verl's check: one rendering of the whole conversation, the same ids.
    assert ids == ids_of(t, messages, False)
    learned = t.decode([i for i, m in zip(ids, mask) if m])
    assert not any(c.isupper() for c in learned), learned
    assert 0 < sum(mask) < len(ids)
    # Every assistant text is learned, as many times as it is said.
    for m in messages:
        if m["role"] == "assistant" and m["content"]:
            assert m["content"] in learned
    assert mask[:prompt_length] == [0] * prompt_length


def test_tool_calls_are_written_once_as_json():
    t = tokenizer_with(PLAIN)
    [(ids, mask, _)] = render(t, {"messages": CONVERSATIONS["parallel tool calls"], "tools": TOOLS})
    text = t.decode(ids)
    assert '"arguments": {"path": "a"}' in text and '"arguments": {"path": "b"}' in text
    assert '"{\\"' not in text


def test_a_think_stripping_template_gives_one_example_per_turn_with_the_prompt_the_model_saw():
    t = tokenizer_with(THINK)
    messages = CONVERSATIONS["several turns"]
    examples = render(t, {"messages": messages, "tools": TOOLS})
    assert len(examples) == 3
    for (ids, mask, prompt_length), i in zip(examples, [1, 3, 5]):
        assert ids[:prompt_length] == ids_of(t, messages[:i], True)
        said = t.decode(ids[prompt_length:])
        assert said.startswith(f"<think>{messages[i]['reasoning_content']}</think>{messages[i]['content']}")
        assert mask == [0] * prompt_length + [1] * (len(ids) - prompt_length)


def test_a_template_that_cannot_say_where_the_assistant_speaks_is_refused():
    t = tokenizer_with(MISPLACED)
    with pytest.raises(Unrenderable, match="generation prompt is not where assistant turn 2 begins"):
        render(t, {"messages": CONVERSATIONS["plain text"], "tools": []})


def test_the_command_writes_examples_and_errors_line_by_line(tmp_path):
    import subprocess
    import sys

    folder = tmp_path / "student"
    tokenizer_with(PLAIN).save_pretrained(folder)
    bad = tmp_path / "bad"
    tokenizer_with(MISPLACED).save_pretrained(bad)
    source = tmp_path / "in.jsonl"
    lines = [
        {"id": "r1", "conversations": [{"messages": CONVERSATIONS["plain text"], "tools": []}]},
        {"id": "r2", "conversations": [{"messages": m, "tools": TOOLS} for m in CONVERSATIONS.values()][:2]},
    ]
    source.write_text("".join(json.dumps(x) + "\n" for x in lines))
    for tokenizer, expect in [(folder, "examples"), (bad, "error")]:
        out = tmp_path / f"{tokenizer.name}.jsonl"
        cmd = ["-m", "alight_worker.render_sft", "--tokenizer", str(tokenizer), "--in", str(source), "--out", str(out)]
        # From the package's folder, as the CLI runs it (src/samples/render-run.ts), not from wherever pytest started.
        subprocess.run([sys.executable, *cmd], check=True, cwd=pathlib.Path(__file__).resolve().parents[1])
        rows = [json.loads(x) for x in out.read_text().splitlines()]
        assert [r["id"] for r in rows] == ["r1", "r2"]
        assert all(expect in r for r in rows)
    rendered = [json.loads(x) for x in (tmp_path / "student.jsonl").read_text().splitlines()]
    assert len(rendered[1]["examples"]) == 2
    assert "generation prompt is not where" in json.loads((tmp_path / "bad.jsonl").read_text().splitlines()[0])["error"]
