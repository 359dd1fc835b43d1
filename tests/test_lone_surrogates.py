"""A JSON-RPC message with a lone surrogate escape, repaired for the MCP SDK (plugin.surfaces.lone_surrogates)."""

from __future__ import annotations

import json

import pydantic_core
import pytest
from hypothesis import given
from hypothesis import strategies as st

from plugin.surfaces.lone_surrogates import repaired

LONE = json.dumps({"query": "rust \ud83d async"})  # JSON.stringify of a string cut inside an emoji's pair


def test_a_lone_half_of_a_pair_becomes_a_replacement_character_and_the_rest_is_kept():
    assert '"rust \\ud83d async"' in LONE
    with pytest.raises(ValueError):
        pydantic_core.from_json(LONE)  # what the SDK does with it
    fixed = repaired(LONE)
    assert pydantic_core.from_json(fixed) == {"query": "rust \ufffd async"}


def test_keys_and_nested_values_are_repaired_too():
    message = json.dumps({"jsonrpc": "2.0", "id": 7, "params": {"arguments": {"q\udc00": ["a\ud800", 1, None, True]}}})
    assert pydantic_core.from_json(repaired(message)) == {
        "jsonrpc": "2.0", "id": 7, "params": {"arguments": {"q\ufffd": ["a\ufffd", 1, None, True]}}}


@pytest.mark.parametrize("text", [
    json.dumps({"query": "rust \U0001F600 async"}),  # a whole pair, escaped: the SDK reads it
    '{"query": "rust \\\\ud83d async"}',             # an escaped backslash then "ud83d": no escape at all
    '{"query": "rust async"}',
    '{"query": "rust \\ud83d async"',                # not JSON: left for the SDK to refuse
    "[" * 3000 + '"\\ud800"' + "]" * 3000,           # deeper than any message: left as it is, no crash
])
def test_what_needs_no_repair_or_cannot_be_read_is_left_alone(text):
    assert repaired(text) is None


# Text of any characters, halves of surrogate pairs often among them (alone, or two making a pair).
strings = st.lists(st.characters(categories=["Cs"]) | st.sampled_from(["\ud83d", "\ude00", "\\", '"', "u"])
                   | st.text(max_size=3), max_size=6).map("".join)
values = st.recursive(
    st.none() | st.booleans() | st.integers() | strings,
    lambda children: st.lists(children, max_size=4) | st.dictionaries(strings, children, max_size=4),
    max_leaves=12)


@given(values)
def test_any_json_the_sdk_refuses_for_a_lone_surrogate_it_reads_once_repaired(value):
    """Whatever strings a client sends (lone halves of pairs included, escaped as JSON.stringify does):
    the SDK's parser reads the message as it is or repaired, and only the lone halves changed."""
    text = json.dumps(value)  # ASCII: every surrogate as a \\u escape, as a JavaScript client writes them
    fixed = repaired(text)
    read = pydantic_core.from_json(fixed if fixed is not None else text)
    expected = _without_lone_halves(json.loads(text))  # json.loads joins the escapes that make a pair
    assert read == expected
    if fixed is not None:
        assert "\n" not in fixed  # still one line of the stdio transport


def _without_lone_halves(value):
    if isinstance(value, str):
        return "".join("\ufffd" if 0xD800 <= ord(c) <= 0xDFFF else c for c in value)
    if isinstance(value, list):
        return [_without_lone_halves(v) for v in value]
    if isinstance(value, dict):
        return {_without_lone_halves(k): _without_lone_halves(v) for k, v in value.items()}
    return value
