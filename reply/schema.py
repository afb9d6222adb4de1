"""The JSON-schema questions llama.cpp's grammars ask of a tool parameter (common/json-schema.cpp): which
value types it allows, and whether it may be a string (then its text is taken raw, not parsed)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

ALL_TYPES = frozenset({"null", "boolean", "number", "integer", "string", "array", "object"})
FORMATS = frozenset({"date", "time", "date-time", "uuid", "uuid1", "uuid2", "uuid3", "uuid4", "uuid5"})
"""The string formats llama.cpp knows (get_format): a schema without a type that names one is a string's."""


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object"


def _resolve(ref: str, root: dict[str, Any]) -> dict[str, Any] | None:
    if not ref.startswith("#"):
        return None
    node: Any = root
    for part in ref[1:].split("/"):
        if not part:
            continue
        if not isinstance(node, dict) or part not in node:
            return None
        node = node[part]
    return node if isinstance(node, dict) else None


def value_types(schema: Any, root: dict[str, Any], seen: frozenset[int] = frozenset()) -> frozenset[str]:
    """The JSON types a value of this schema may have."""
    if not isinstance(schema, dict):
        return ALL_TYPES
    if "$ref" in schema:
        target = _resolve(schema["$ref"], root)
        if target is None or id(target) in seen:
            return frozenset()
        return value_types(target, root, seen | {id(target)})
    for key in ("oneOf", "anyOf"):
        if key in schema:
            out: frozenset[str] = frozenset()
            for child in schema[key]:
                out |= value_types(child, root, seen)
            return out
    kind = schema.get("type")
    if isinstance(kind, list):
        out = frozenset()
        for item in kind:
            out |= value_types({**schema, "type": item}, root, seen)
        return out
    if "const" in schema:
        return frozenset({_json_type(schema["const"])})
    if "enum" in schema:
        return frozenset(_json_type(v) for v in schema["enum"])
    has_properties = "properties" in schema or (
        "additionalProperties" in schema and schema["additionalProperties"] is not True)
    if kind is None:
        if has_properties:
            return frozenset({"object"})
        if "allOf" in schema:
            return _all_of(schema["allOf"], root, seen)
        if "items" in schema or "prefixItems" in schema:
            return frozenset({"array"})
        if any(k in schema for k in ("pattern", "minLength", "maxLength")) or schema.get("format") in FORMATS:
            return frozenset({"string"})
        return ALL_TYPES
    if kind in ("object", "string") and "allOf" in schema and not (kind == "object" and has_properties):
        return _all_of(schema["allOf"], root, seen)
    if kind == "number":
        return frozenset({"number", "integer"})
    return frozenset({kind}) if kind in ALL_TYPES else frozenset()


def _all_of(children: list[Any], root: dict[str, Any], seen: frozenset[int]) -> frozenset[str]:
    out = ALL_TYPES
    for child in children:
        out &= value_types(child, root, seen)
    return out


def may_be_string(schema: Any, root: dict[str, Any], seen: frozenset[int] = frozenset()) -> bool:
    """Whether a value of this schema may be a string (llama.cpp's may_be_string)."""
    if not isinstance(schema, dict):
        return False
    if "$ref" in schema:
        target = _resolve(schema["$ref"], root)
        if target is None or id(target) in seen:
            return False
        return may_be_string(target, root, seen | {id(target)})
    for key in ("oneOf", "anyOf"):
        if key in schema:
            return any(may_be_string(child, root, seen) for child in schema[key])
    kind = schema.get("type")
    if isinstance(kind, list):
        return any(may_be_string({**schema, "type": item}, root, seen) for item in kind)
    if "const" in schema:
        return isinstance(schema["const"], str)
    if "enum" in schema:
        return any(isinstance(v, str) for v in schema["enum"])
    types = value_types(schema, root, seen)
    if "allOf" in schema and types != frozenset({"string"}):
        children = [c for c in schema["allOf"] if value_types(c, root, seen) != ALL_TYPES]
        return bool(children) and all(may_be_string(c, root, seen) for c in children)
    return kind == "string" or (kind is None and types == frozenset({"string"}))


@dataclass(frozen=True)
class Parameter:
    """One tool parameter: name, schema, whether required."""

    name: str
    schema: dict[str, Any]
    required: bool
    root: dict[str, Any]

    @property
    def types(self) -> frozenset[str]:
        """The value types it allows."""
        return value_types(self.schema, self.root)

    @property
    def may_be_string(self) -> bool:
        """Whether its value may be a string."""
        return may_be_string(self.schema, self.root)


def parameters(function: dict[str, Any]) -> list[Parameter]:
    """A function's parameters in schema order."""
    params = function.get("parameters") or {"type": "object", "properties": {}}
    required = set(params.get("required") or [])
    props = params.get("properties") or {}
    return [Parameter(name, schema if isinstance(schema, dict) else {}, name in required, params)
            for name, schema in props.items()]
