"""The worker's tool calling (alight_worker/tool_calls.py): a model's text read back as OpenAI tool calls the way vLLM's
hermes parser reads it, and a call sent back by a harness rendered, through the calculator example's template, as the
very text the model sampled, so that the next turn's prompt extends the last one token for token."""

import json
import os

import pytest

from alight_worker.tiny import make_tokenizer
from alight_worker.tool_calls import parse_calls, request_tools, template_messages

TEMPLATE = os.path.join(os.path.dirname(__file__), "..", "..", "examples", "calculator", "chat_template.jinja")
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "calculate",
            "description": "The value of an arithmetic expression.",
            "parameters": {"type": "object", "properties": {"expression": {"type": "string"}}},
        },
    }
]
CALL = '<tool_call>{"name": "calculate", "arguments": {"expression": "361 * 220"}}</tool_call>'


def test_reads_a_call_and_the_text_before_it():
    content, calls = parse_calls("Let me compute. " + CALL)
    assert content == "Let me compute. "  # as written: the next turn renders it again
    assert [(c["type"], c["function"]["name"], json.loads(c["function"]["arguments"])) for c in calls] == [
        ("function", "calculate", {"expression": "361 * 220"})
    ]
    assert calls[0]["id"].startswith("call_")


def test_reads_several_calls_with_no_text():
    content, calls = parse_calls(CALL + "\n" + CALL.replace("361", "7"))
    assert content is None
    assert [json.loads(c["function"]["arguments"])["expression"] for c in calls] == ["361 * 220", "7 * 220"]
    assert len({c["id"] for c in calls}) == 2


@pytest.mark.parametrize(
    "text",
    [
        "The answer is 79420.",
        '<tool_call>{"name": "calculate", "arguments": {"expression": </tool_call>',  # not JSON
        '<tool_call>{"arguments": {}}</tool_call>',  # no name
        '<tool_call>["calculate"]</tool_call>',  # not an object
        '<tool_call>{"name": "calculate"',  # never closed
    ],
)
def test_text_that_is_no_well_formed_call_stays_text(text):
    assert parse_calls(text) == (text, [])


def test_tools_offered_unless_none_chosen():
    assert request_tools({"tools": TOOLS}) == TOOLS
    assert request_tools({"tools": TOOLS, "tool_choice": "none"}) is None
    assert request_tools({"tools": []}) is None
    assert request_tools({}) is None


def test_openai_messages_as_templates_read_them():
    messages = template_messages(
        [
            {"role": "user", "content": [{"type": "text", "text": "6 * "}, {"type": "text", "text": "7?"}]},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "c1",
                        "type": "function",
                        "function": {"name": "calculate", "arguments": '{"expression": "6*7"}'},
                    }
                ],
            },
            {"role": "tool", "tool_call_id": "c1", "content": "42"},
        ]
    )
    assert messages[0] == {"role": "user", "content": "6 * 7?"}
    assert messages[1]["content"] == ""
    assert messages[1]["tool_calls"][0]["function"] == {"name": "calculate", "arguments": {"expression": "6*7"}}
    assert messages[2] == {"role": "tool", "content": "42", "tool_call_id": "c1"}


@pytest.mark.parametrize("before", ["", "```\n", "Let me compute. "])
def test_a_call_sent_back_renders_as_the_sampled_text(before):
    tokenizer = make_tokenizer()
    with open(TEMPLATE) as f:
        tokenizer.chat_template = f.read()
    asked = [{"role": "system", "content": "Use the calculator."}, {"role": "user", "content": "361 * 220?"}]
    prompt = tokenizer.apply_chat_template(asked, tools=TOOLS, tokenize=False, add_generation_prompt=True)
    assert '"name": "calculate"' in prompt  # the tools are listed for the model
    content, calls = parse_calls(before + CALL)
    # As a harness sends the turn back: OpenAI's shape, the arguments a JSON string.
    back = template_messages([*asked, {"role": "assistant", "content": content, "tool_calls": calls}])
    again = tokenizer.apply_chat_template(back, tools=TOOLS, tokenize=False)
    assert again == prompt + before + CALL + "<|im_end|>\n"


def test_without_tools_the_template_is_smollm2s_own():
    tokenizer = make_tokenizer()
    with open(TEMPLATE) as f:
        tokenizer.chat_template = f.read()
    text = tokenizer.apply_chat_template(
        [{"role": "user", "content": "hi"}], tokenize=False, add_generation_prompt=True
    )
    assert text == (
        "<|im_start|>system\nYou are a helpful AI assistant named SmolLM, trained by Hugging Face<|im_end|>\n"
        "<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n"
    )
