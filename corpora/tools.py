"""The tool sets offered to sessions that offer tools (OpenAI function format)."""

from __future__ import annotations

from typing import Any


def _function(name: str, description: str, properties: dict[str, Any], required: list[str],
              defs: dict[str, Any] | None = None) -> dict[str, Any]:
    """An OpenAI tool definition (with `$defs` for its schemas' references when given)."""
    parameters: dict[str, Any] = {"type": "object", "properties": properties, "required": required}
    if defs:
        parameters["$defs"] = defs
    return {"type": "function", "function": {"name": name, "description": description, "parameters": parameters}}


GET_WEATHER = _function(
    "get_weather",
    "Get the weather forecast for a city.",
    {
        "city": {"type": "string", "description": "The city name."},
        "days": {"type": "integer", "description": "How many days to forecast."},
    },
    ["city"],
)

CREATE_EVENT = _function(
    "create_event",
    "Create a calendar event.",
    {
        "event": {
            "type": "object",
            "description": "The event.",
            "properties": {
                "title": {"type": "string"},
                "place": {
                    "type": "object",
                    "properties": {"city": {"type": "string"}, "room": {"type": "integer"}},
                },
            },
            "required": ["title"],
        },
        "attendees": {"type": "array", "items": {"type": "string"}, "description": "Who attends."},
    },
    ["event", "attendees"],
)

GET_TIME = _function("get_time", "Get the current time.", {}, [])

RUN_CODE = _function(
    "run_code",
    "Run a program and return what it prints.",
    {
        "language": {"type": "string", "description": "The language."},
        "code": {"type": "string", "description": "The source code."},
    },
    ["language", "code"],
)

STANDARD_TOOLS: tuple[dict[str, Any], ...] = (GET_WEATHER, CREATE_EVENT, GET_TIME, RUN_CODE)

TRAVELLER = {
    "type": "object",
    "properties": {"name": {"type": "string"}, "age": {"type": "integer"}},
    "required": ["name"],
}

BOOK_TRIP = _function(
    "book_trip",
    "Book a trip, with schemas as real APIs write them.",
    {
        "destination": {"type": "string", "enum": ["Rio", "Lima", "Oslo"], "description": "Where to."},
        "cabin": {"enum": ["economy", "business", 1], "description": "An enum without a type."},
        "api_version": {"const": "v2"},
        "return_date": {
            "anyOf": [{"type": "string"}, {"type": "null"}],
            "description": "An ISO date, or null for one way.",
        },
        "budget": {"anyOf": [{"type": "number"}, {"type": "null"}]},
        "gate": {"type": ["string", "null"], "description": "A nullable string, as strict schemas write it."},
        "memo": {"type": "string", "description": "A note for the agent."},
        "flight": {"anyOf": [{"type": "string"}, {"type": "integer"}], "description": "A code or a number."},
        "seats": {"allOf": [{"type": "integer"}, {"minimum": 1}]},
        "travellers": {"type": "array", "items": TRAVELLER},
        "preferences": {
            "type": "object",
            "properties": {"window": {"type": "boolean"}, "meals": {"type": "array", "items": {"type": "string"}}},
        },
        "notes": {"description": "Anything else, in any form (no type)."},
        "passport": {"minLength": 8, "description": "The passport number (a length bound, no type)."},
        "reference": {},
        "refundable": {"type": "boolean"},
        "hotel": {
            "anyOf": [
                {"type": "object", "properties": {"name": {"type": "string"}, "nights": {"type": "integer"}}},
                {"type": "null"},
            ],
            "description": "An optional object, as Optional[Model] schemas write it.",
        },
        "stops": {
            "items": {"type": "string"},
            "additionalProperties": True,
            "description": "Stops on the way: a list schema without a type, additionalProperties written out.",
        },
        "labels": {
            "type": ["string", "array"],
            "items": {"type": "string"},
            "description": "A label or a list of labels.",
        },
        "seat_pair": {
            "type": "array",
            "items": [{"type": "integer"}, {"type": "integer"}],
            "description": "Two seats side by side: a tuple as Pydantic v1 writes it, a list of item schemas.",
        },
        "contact": {"properties": {
            "phone": {"type": "string"},
            "hours": {"oneOf": [{"type": "array", "items": {"type": "integer"}}, {"type": "null"}],
                      "description": "When to call (hours of the day) or null, as OpenAPI writes a nullable list."}},
            "description": "How to reach the traveller: an object schema without a type."},
        "tags": {"anyOf": [{"type": "string"}, {"items": {"type": "string"}}],
                 "description": "A tag or a list of tags, the list schema without a type."},
        "nights": {"type": ["integer", "null"], "description": "Nights to stay, or null: a nullable integer."},
        "memo_parts": {"type": ["string", "object"],
                       "description": "The memo as a string or an object of parts (named after memo)."},
    },
    ["destination", "travellers", "cabin"],
)

TYPED_TRIP = {
    "destination": "Lima",
    "travellers": [{"name": "Ana", "age": 34}, {"name": "Rui"}],
    "cabin": "business",
    "api_version": "v2",
    "return_date": None,
    "budget": 1250.5,
    "seats": 2,
    "gate": "12",
    "memo": "Window seat,\r\nplease",
    "flight": 815,
    "preferences": {"window": True, "meals": ["veg", "none"]},
    "notes": {"late": True, "code": 7},
    "reference": 42,
    "passport": "80412345",
    "labels": ["family", "beach"],
}
"""Arguments of book_trip touching every kind of schema it declares: enum, const, null, anyOf, allOf, arrays of
objects, nested objects, untyped values (an object and a number), a digit string typed as a nullable string and
one typed only by a length bound, a string holding a carriage return, a number where a string or an integer may
be, a boolean nested in an object and a list where a string or a list may be; the required parameters first, as llama.cpp's grammars for parameter-tag
formats expect."""

STRICT_TRIP = {
    "destination": "Oslo",
    "cabin": "economy",
    "travellers": [{"name": "Ana", "age": 34}],
    "api_version": "v2",
    "return_date": "2027-01-15",
    "budget": None,
    "seats": 1,
    "gate": None,
    "memo": "2048",
    "flight": "LA815",
    "preferences": {"window": False, "meals": []},
    "refundable": True,
    "hotel": {"name": "Fjord Inn", "nights": 3},
    "labels": "family",
}
"""Arguments of book_trip giving a value to every typed parameter and none to the untyped ones (as strict schemas
allow): a string and a null where anyOf allows either, a null where the type is a list, a string of digits for a
string parameter, a string where a string or an integer may be, a top-level boolean true, an object where
anyOf allows an object or a null and a string where a string or a list may be; the required parameters first, in the schema's order (as the grammars of
templates that take parameters in that order expect: GLM, MiniMax, Laguna, Hy3)."""

UNTYPED_TRIP = {
    "destination": "Lima",
    "cabin": "economy",
    "travellers": [{"name": "Ana"}],
    "stops": ["Cusco", "Puno"],
}
"""Arguments of book_trip with a list under a schema that has no type, only items and additionalProperties (read
as an array by llama.cpp's common_chat_schema_from_json, as an object had additionalProperties been false); the
required parameters first, in schema order, as MiniMax-M3's grammar expects them."""

TUPLE_TRIP = {
    "destination": "Oslo",
    "cabin": "economy",
    "travellers": [{"name": "Ana"}],
    "seat_pair": [14, 15],
}
"""Arguments of book_trip with a pair of integers under a tuple schema written as a list of item schemas (read
as a tuple by llama.cpp's common_chat_schema_from_json, so as one JSON value where a template writes arrays
item by item); the required parameters first, in schema order."""

TYPELESS_TRIP = {
    "destination": "Oslo",
    "cabin": "economy",
    "travellers": [{"name": "Ana"}],
    "contact": {"phone": "+55 21 5550100", "hours": [18, 20]},
    "tags": ["quiet", "late"],
}
"""Arguments of book_trip under schemas without a type: an object under one that has properties, holding a list
under a oneOf of a list and null (where Functionary v3.2's template, which llama.cpp cannot render with a oneOf,
does not look), and a list under an anyOf of a string and a list schema without a type; the required parameters
first, in schema order."""

PREFIXED_TRIP = {
    "destination": "Rio",
    "cabin": "economy",
    "travellers": [{"name": "Ana"}],
    "nights": 3,
    "memo_parts": {"greeting": "Say \"obrigado\" twice", "sign": "Ana's crew"},
}
"""Arguments of book_trip with an integer under a type list without a string (a nullable integer), and a parameter
whose name begins with another's (memo_parts beside memo), holding an object where a string or an object may be,
whose first string escapes a double quote and whose second holds a single quote; the required parameters first,
in schema order."""

ORDER_MEAL = _function(
    "order_meal",
    "Order a meal, with schemas as Pydantic models write them.",
    {
        "dish": {"type": "string", "title": "Dish"},
        "deliver_to": {"type": "object", "allOf": [{"$ref": "#/$defs/Place"}], "description": "Where to."},
        "size": {"$ref": "#/$defs/Size"},
        "when": {"anyOf": [{"type": "string", "format": "date"}, {"type": "string", "const": "asap"}],
                 "title": "When"},
        "extra": {"allOf": [{"$ref": "#/$defs/Extra"}], "description": "A Literal of a string and a number."},
        "window": {"type": "array", "items": [{"type": "integer"}, {"type": "integer"}], "title": "Window",
                   "description": "A (minutes from now, minutes long) pair, as Pydantic v1 writes a tuple."},
    },
    ["dish", "deliver_to"],
    {
        "Place": {"type": "object", "title": "Place", "required": ["city"], "properties": {
            "city": {"type": "string", "title": "City"},
            "zone": {"anyOf": [{"type": "integer"}, {"type": "null"}], "default": None, "title": "Zone"}}},
        "Size": {"type": "string", "enum": ["small", "large"], "title": "Size"},
        "Extra": {"enum": ["napkins", 2], "title": "Extra"},
    },
)

MEAL_ORDER = {
    "dish": "feijoada",
    "deliver_to": {"city": "Rio", "zone": None},
    "size": "large",
    "when": "asap",
    "extra": "napkins",
    "window": [30, 45],
}
"""Arguments of order_meal through every reference: an object behind allOf and a $ref, a string enum behind a
$ref, a string under an anyOf of two strings, a string behind an allOf-wrapped reference to an enum of a
string and a number, and a tuple written as a list of item schemas; the required parameters first."""

CHECK_IN = _function(
    "check_in",
    "Check a guest in, with schemas that name no type but a keyword of one.",
    {
        "voucher": {"maxLength": 6, "description": "A voucher code: a length bound, no type."},
        "email": {"pattern": "^[^@]+@[^@]+$", "description": "A pattern, no type."},
        "arrival": {"format": "date", "description": "A date format, no type."},
        "website": {"format": "uri", "description": "A format llama.cpp does not know, no type: any value."},
        "room": {"enum": [101, 102], "description": "An enum of numbers, no type."},
        "floor": {"const": 3},
        "badge": {"type": "string", "nullable": True, "description": "OpenAPI's nullable, which JSON schema lacks."},
        "note": {"anyOf": [{"minLength": 1}, {"type": "null"}], "description": "A bounded string or null."},
        "extras": {"allOf": [{"maxLength": 20}, {"pattern": "^[a-z ]*$"}], "description": "Two string bounds."},
        "stay": {"type": ["integer", "string"], "description": "Nights, or a text such as 'two'."},
    },
    ["voucher", "email"],
)

GUEST = {
    "voucher": "AB12CD",
    "email": "ana@example.org",
    "arrival": "2027-01-10",
    "room": 101,
    "floor": 3,
    "badge": "B-7",
    "note": "late arrival",
    "extras": "crib",
    "stay": "two",
}
"""Arguments of check_in, each under a schema with no type (or OpenAPI's nullable beside one): raw text a
parameter-tag template writes without JSON quotes (a code of letters and digits, an address, a date), a number
from an enum and a const, text under a nullable string, an anyOf of a bound and null and an allOf of two bounds,
and text where a type list allows an integer first; in schema order."""

GUEST_SITE = {"voucher": "AB12CD", "email": "ana@example.org", "website": "https://example.org/ana"}
"""Arguments of check_in with an address under a format llama.cpp does not know and no type: any JSON value, so
raw text a parameter-tag template writes is refused there, as llama.cpp refuses it."""

SWEEP_TOOLS: tuple[dict[str, Any], ...] = (*STANDARD_TOOLS, BOOK_TRIP, ORDER_MEAL, CHECK_IN)
"""The tools of a typed-tools session: the standard set and tools whose schemas vary as real APIs' do."""
