"""The worker's init settings (alight_worker/settings.py): checked whole against the schema src/worker/settings.ts
writes, each problem named; and no module defaults a setting of its own."""

import ast
import json
from pathlib import Path

import pytest

from alight_worker.settings import SCHEMA, checked
from conftest import torch_settings, training_settings

WORKER = Path(__file__).resolve().parents[1] / "alight_worker"


def test_complete_settings_pass_and_each_problem_is_named_where_it_is():
    assert checked(torch_settings("/m", training_settings())) == torch_settings("/m", training_settings())
    assert checked(torch_settings("/m"))["training"] is None  # a worker that only serves
    bad = torch_settings("/m", training_settings(lr=0, ppo_epochs=1.5, objective="dpo", extra=1), threads=True)
    del bad["seed"]
    with pytest.raises(ValueError) as err:
        checked(bad)
    message = str(err.value)
    for problem in [
        "settings.seed is missing",
        "settings.threads must be integer",
        "settings.training.lr must be above 0",
        "settings.training.ppo_epochs must be integer",
        "settings.training.objective must be one of rl, sft",
        "settings.training.extra is not a setting",
    ]:
        assert problem in message, message
    with pytest.raises(ValueError, match="matches 0 of its forms"):
        checked({**torch_settings("/m"), "backend": "jax"})


def schema_keys(schema):
    """Every property name anywhere in the schema."""
    if isinstance(schema, list):
        return set().union(*map(schema_keys, schema))
    if not isinstance(schema, dict):
        return set()
    return set(schema.get("properties", {})) | set().union(*map(schema_keys, schema.values()))


# The names the worker's modules give the settings or a part of them (settings["training"], …).
HOLDERS = {"settings", "training", "params", "adapter", "t", "p"}


def holder(node):
    """`settings` in `settings.get(…)` or `self.settings.get(…)`."""
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self":
        return node.attr
    return node.id if isinstance(node, ast.Name) else None


def test_no_module_gives_a_setting_a_default_of_its_own():
    """`settings.get("lr", …)` would be a second default beside the run's config: every setting is read as
    `settings["lr"]` from the checked settings."""
    keys = schema_keys(json.loads(Path(SCHEMA).read_text()))
    assert {"lr", "micro_batch_rows", "ray_address", "max_batch", "lora"} <= keys
    found = [
        f"{file.name}:{node.lineno}"
        for file in WORKER.rglob("*.py")
        for node in ast.walk(ast.parse(file.read_text()))
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "get"
        and holder(node.func.value) in HOLDERS
        and node.args
        and getattr(node.args[0], "value", None) in keys
    ]
    assert found == []
