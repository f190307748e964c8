"""The worker's `init` settings, checked against settings.schema.json: src/worker/settings.ts written out by
`npm run worker:schema`. The worker reads what it needs from the checked settings and defaults nothing: a missing or
unknown key, or a value of the wrong kind, fails init with its place named. Only the JSON Schema keywords that zod
writes for that schema are understood; another one is refused rather than ignored."""

import json
import os

SCHEMA = os.path.join(os.path.dirname(__file__), "settings.schema.json")

TYPES = {
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "string": lambda v: isinstance(v, str),
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
    "boolean": lambda v: isinstance(v, bool),
    "null": lambda v: v is None,
}
# Keywords that say nothing about a value.
NOTES = {"$schema", "description"}


def kinds(type_):
    """A schema's `type`: one name, or a list of them (a nullable string: ["string", "null"])."""
    return type_ if isinstance(type_, list) else [type_]


def of_type(type_, value):
    return any(TYPES[kind](value) for kind in kinds(type_))


def checked(settings):
    """`settings` when the schema holds for it, else a ValueError listing every problem."""
    with open(SCHEMA, encoding="utf-8") as f:
        schema = json.load(f)
    found = problems(schema, settings, "settings")
    if found:
        raise ValueError("init settings: " + "; ".join(found))
    return settings


def problems(schema, value, at):
    """What is wrong with `value` under `schema`, each naming where (settings.training.lr)."""
    unknown = set(schema) - NOTES - set(KEYWORDS)
    if unknown:
        raise ValueError(f"settings.schema.json: keyword {sorted(unknown)} not understood at {at}")
    if "type" in schema and not of_type(schema["type"], value):
        return [f"{at} must be {' or '.join(kinds(schema['type']))}, not {json.dumps(value)}"]
    return [p for keyword in schema if keyword in KEYWORDS for p in KEYWORDS[keyword](schema, value, at)]


def tags(option):
    """The constants an option of a union is told apart by (backend: torch)."""
    return {k: p["const"] for k, p in option.get("properties", {}).items() if "const" in p}


def one_of(schema, value, at):
    options = schema["oneOf"]
    # The option the value names by its constants, so that its problems are the ones shown.
    named = [o for o in options if isinstance(value, dict) and tags(o) and tags(o).items() <= value.items()]
    if len(named) == 1:
        return problems(named[0], value, at)
    fits = sum(1 for o in options if not problems(o, value, at))
    forms = "; ".join(json.dumps(tags(o)) for o in options)
    return [] if fits == 1 else [f"{at} matches {fits} of its forms ({forms}), not one"]


def any_of(schema, value, at):
    # The option of the value's type (an object, not null) says what is wrong with it; else the closest one.
    options = schema["anyOf"]
    typed = [o for o in options if "type" not in o or of_type(o["type"], value)]
    found = [problems(o, value, at) for o in (typed if len(typed) == 1 else options)]
    return [] if any(not f for f in found) else min(found, key=len)


def object_problems(schema, value, at):
    props = schema.get("properties", {})
    found = [f"{at}.{k} is missing" for k in schema.get("required", []) if k not in value]
    if schema.get("additionalProperties") is False:
        found += [f"{at}.{k} is not a setting" for k in value if k not in props]
    return found + [p for k, s in props.items() if k in value for p in problems(s, value[k], f"{at}.{k}")]


KEYWORDS = {
    "type": lambda s, v, at: [],
    "oneOf": one_of,
    "anyOf": any_of,
    "properties": object_problems,
    "required": lambda s, v, at: [],  # with properties
    "additionalProperties": lambda s, v, at: [],  # with properties
    "items": lambda s, v, at: [p for i, x in enumerate(v) for p in problems(s["items"], x, f"{at}[{i}]")],
    "const": lambda s, v, at: [] if v == s["const"] else [f"{at} must be {json.dumps(s['const'])}"],
    "enum": lambda s, v, at: [] if v in s["enum"] else [f"{at} must be one of {', '.join(map(str, s['enum']))}"],
    "minimum": lambda s, v, at: [] if v >= s["minimum"] else [f"{at} must be at least {s['minimum']}"],
    "maximum": lambda s, v, at: [] if v <= s["maximum"] else [f"{at} must be at most {s['maximum']}"],
    "exclusiveMinimum": lambda s, v, at: (
        [] if v > s["exclusiveMinimum"] else [f"{at} must be above {s['exclusiveMinimum']}"]
    ),
    "minLength": lambda s, v, at: [] if len(v) >= s["minLength"] else [f"{at} must not be empty"],
    "minItems": lambda s, v, at: [] if len(v) >= s["minItems"] else [f"{at} needs at least {s['minItems']} item(s)"],
}
