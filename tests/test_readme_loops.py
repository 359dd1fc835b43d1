"""The README's OpenAI and Anthropic tool loops produce valid message sequences.

The SDKs are not dependencies of the project, so their request types are not available here: the
loops run as written in the README against a small client that scripts the model's replies (two tool
calls in one reply, then a text answer) and records every request, and the recorded `messages` are
checked against each API's documented rules for tool use (written out below). The searches are real,
against a loopback engine.
"""

from __future__ import annotations

import json
import re
import sys
import types
from pathlib import Path

import pytest

from plugin.bench.loopback import LoopbackSite
from standins import bing_page

ROOT = Path(__file__).resolve().parents[1]
ROWS = [("What's New In Python 3.13", "https://docs.python.org/3/whatsnew/3.13.html", "python 3.13 changes")]


def readme_block(title: str) -> str:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    start = readme.index(f"**{title}**")
    return re.search(r"```python\n(.*?)```", readme[start:], flags=re.S).group(1)


@pytest.fixture
def loopback_bing(monkeypatch, tmp_path):
    body = bing_page(ROWS).encode()
    with LoopbackSite(lambda path: (200, "text/html; charset=utf-8", body)) as site:
        monkeypatch.setenv("METASEARCH_ENDPOINTS", json.dumps({"bing": site.base}))
        monkeypatch.setenv("METASEARCH_ENGINES", '["bing"]')
        (tmp_path / "web_search.json").write_text("{}", encoding="utf-8")
        monkeypatch.chdir(tmp_path)
        yield


class Obj(types.SimpleNamespace):
    pass


def check_openai_messages(messages: list[dict]) -> None:
    """Chat Completions: an assistant message with `tool_calls` is followed by exactly one `tool` message
    per call id (and nothing else) before the next assistant or user message; each assistant reply
    appears once."""
    roles = {"system", "developer", "user", "assistant", "tool"}
    i = 0
    while i < len(messages):
        message = messages[i]
        assert isinstance(message, dict) and message["role"] in roles, message
        if message["role"] == "tool":
            raise AssertionError(f"tool message without the assistant message it answers at {i}")
        if message["role"] == "assistant" and message.get("tool_calls"):
            for call in message["tool_calls"]:
                assert set(call) == {"id", "type", "function"} and call["type"] == "function"
                assert set(call["function"]) == {"name", "arguments"}
            ids = [call["id"] for call in message["tool_calls"]]
            answers = messages[i + 1:i + 1 + len(ids)]
            assert [m.get("role") for m in answers] == ["tool"] * len(ids), messages
            assert sorted(m["tool_call_id"] for m in answers) == sorted(ids)
            assert all(isinstance(m["content"], str) and m["content"] for m in answers)
            i += len(ids)
        i += 1


def check_anthropic_messages(messages: list[dict]) -> None:
    """Messages API: roles alternate, starting with user; every tool_use of an assistant turn is answered
    by a tool_result in the very next user turn, and a user turn answers no other ids."""
    assert messages[0]["role"] == "user"
    for before, after in zip(messages, messages[1:]):
        assert before["role"] != after["role"], messages
    for i, message in enumerate(messages):
        if message["role"] != "assistant" or isinstance(message["content"], str):
            continue
        uses = [block.id for block in message["content"] if block.type == "tool_use"]
        if not uses:
            continue
        results = messages[i + 1]["content"]
        assert all(block["type"] == "tool_result" for block in results)
        assert sorted(block["tool_use_id"] for block in results) == sorted(uses)
        assert all(isinstance(block["content"], str) and block["content"] for block in results)


def test_the_openai_loop(loopback_bing, monkeypatch):
    requests: list[list[dict]] = []
    # A model invents an argument (lang) and forgets the query: both go back to it as corrections.
    calls = [Obj(id=f"call_{n}", type="function", function=Obj(name="web_search", arguments=json.dumps(args)))
             for n, args in enumerate([{"query": "python 3.13 changes"}, {"query": "python 3.13", "limit": 3},
                                       {"query": "python 3.13", "lang": "en"}, {"limt": 3}])]
    replies = [Obj(content=None, tool_calls=calls), Obj(content="Python 3.13 adds ...", tool_calls=None)]

    def create(*, model, messages, tools):
        requests.append(json.loads(json.dumps(messages)))  # what would go over the wire
        return Obj(choices=[Obj(message=replies[len(requests) - 1])])

    fake = types.ModuleType("openai")
    fake.OpenAI = lambda: Obj(chat=Obj(completions=Obj(create=create)))
    monkeypatch.setitem(sys.modules, "openai", fake)
    exec(readme_block("OpenAI tool loop"), {"__name__": "readme"})
    assert len(requests) == 2
    final = requests[-1]
    check_openai_messages(final)
    assert [m["role"] for m in final] == ["user", "assistant", "tool", "tool", "tool", "tool"]
    assert "docs.python.org/3/whatsnew/3.13.html" in final[2]["content"]
    invented, forgotten = (json.loads(m["content"])["error"] for m in final[4:])
    assert invented["code"] == "invalid_parameter" and invented["parameter"] == "lang"
    assert "lang" in invented["message"] and "region" in invented["message"]  # the arguments it takes
    assert forgotten["code"] == "invalid_parameter" and "did you mean limit?" in forgotten["message"]


def test_the_anthropic_loop(loopback_bing, monkeypatch):
    requests: list[list[dict]] = []
    uses = [Obj(type="tool_use", id=f"toolu_{n}", name="web_search", input=args)
            for n, args in enumerate([{"query": "python 3.13 changes"}, {"query": "x", "limit": "many"}])]
    replies = [Obj(stop_reason="tool_use", content=[Obj(type="text", text="Searching."), *uses]),
               Obj(stop_reason="end_turn", content=[Obj(type="text", text="Python 3.13 adds ...")])]

    def create(*, model, max_tokens, messages, tools):
        requests.append(list(messages))
        return replies[len(requests) - 1]

    fake = types.ModuleType("anthropic")
    fake.Anthropic = lambda: Obj(messages=Obj(create=create))
    monkeypatch.setitem(sys.modules, "anthropic", fake)
    exec(readme_block("Anthropic tool loop"), {"__name__": "readme"})
    assert len(requests) == 2
    final = requests[-1]
    check_anthropic_messages(final)
    assert [m["role"] for m in final] == ["user", "assistant", "user"]
    results = {block["tool_use_id"]: block["content"] for block in final[2]["content"]}
    assert "docs.python.org/3/whatsnew/3.13.html" in results["toolu_0"]
    assert json.loads(results["toolu_1"])["error"]["code"] == "invalid_parameter"  # told, not crashed


def test_the_validators_catch_the_old_loops():
    """The sequence the README used to build (the reply appended once per call) is refused."""
    assistant = {"role": "assistant", "content": None, "tool_calls": [
        {"id": i, "type": "function", "function": {"name": "web_search", "arguments": "{}"}} for i in ("a", "b")]}
    old = [{"role": "user", "content": "q"}, assistant, {"role": "tool", "tool_call_id": "a", "content": "x"},
           assistant, {"role": "tool", "tool_call_id": "b", "content": "y"}]
    with pytest.raises(AssertionError):
        check_openai_messages(old)
    uses = [Obj(type="tool_use", id=i) for i in ("a", "b")]
    old = [{"role": "user", "content": "q"}, {"role": "assistant", "content": uses},
           {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "a", "content": "x"}]},
           {"role": "assistant", "content": uses},
           {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "b", "content": "y"}]}]
    with pytest.raises(AssertionError):
        check_anthropic_messages(old)


# ----- every README tool loop, with a model that sends every argument its tool's schema declares -----
ARTICLE = ("<html><head><title>What's new in Python 3.13</title></head><body><article><h1>Python 3.13</h1>"
           + "".join(f"<p>Python 3.13 changes item {n}: the interpreter gained a new interactive shell and an "
                     f"experimental free-threaded build, part {n} of the release notes.</p>" for n in range(12))
           + "</article></body></html>")


@pytest.fixture
def loopback_site(monkeypatch, tmp_path):
    """One loopback server playing Bing (/search) and the site its row points at (/article, robots.txt);
    page reads may reach 127.0.0.1 (METASEARCH_ALLOW_PRIVATE_HOSTS=127.0.0.1/32), so read=N and web_fetch really read."""
    state: dict[str, str] = {}

    def answer(path: str) -> tuple[int, str, bytes]:
        if path.startswith("/search"):
            return 200, "text/html; charset=utf-8", bing_page([("What's New In Python 3.13", state["article"],
                                                                 "python 3.13 changes")]).encode()
        if path.startswith("/article"):
            return 200, "text/html; charset=utf-8", ARTICLE.encode()
        return 200, "text/plain", b"User-agent: *\nDisallow:\n"

    with LoopbackSite(answer) as site:
        state["article"] = f"{site.base}/article"
        monkeypatch.setenv("METASEARCH_ENDPOINTS", json.dumps({"bing": site.base}))
        monkeypatch.setenv("METASEARCH_ENGINES", '["bing"]')
        monkeypatch.setenv("METASEARCH_ALLOW_PRIVATE_HOSTS", "127.0.0.1/32")
        monkeypatch.setenv("METASEARCH_FETCH_HOST_INTERVAL_MS", "0")
        (tmp_path / "web_search.json").write_text("{}", encoding="utf-8")
        monkeypatch.chdir(tmp_path)
        yield state["article"]


# A value each tool's schema accepts for every argument it may declare ("render": never, so no browser).
VALUES = {
    "web_search": {"query": "python 3.13 changes", "limit": 3, "engines": ["bing"], "region": "en-US",
                   "time_range": "year", "blocked_domains": ["example.com"], "category": "web", "page": 1,
                   "user_location": {"type": "approximate", "country": "US"}, "safesearch": "moderate", "read": 1,
                   "passages": 2, "max_tokens": 2000, "render": "never", "site": "python.org",
                   "allowed_domains": ["python.org"]},
    "web_fetch": {"url": None, "max_chars": 5000, "offset": 0, "format": "markdown",
                  "query": "what changed in python 3.13", "passages": 2, "max_tokens": 1500, "render": "never"},
}
# allowed_domains (and site) cannot go with blocked_domains, and a row at 127.0.0.1 passes no domain filter:
# they go in a second call of their own.
SECOND_CALL = ("site", "allowed_domains")


def every_argument(tool: str, article: str) -> list[dict]:
    """Calls that together send every argument the tool's schema declares, each with a value the schema
    accepts (the schema's own enums and bounds). A declared argument without a value here fails the test."""
    from plugin.surfaces.schemas import tool_schema

    declared = set(tool_schema("anthropic", tool)["input_schema"]["properties"])
    values = {**VALUES[tool], **({"url": article} if tool == "web_fetch" else {})}
    assert declared <= set(values), f"no value for the declared argument(s) {declared - set(values)}"
    first = {name: values[name] for name in declared if name not in SECOND_CALL}
    second = {name: values[name] for name in declared if name in SECOND_CALL}
    calls = [first] + ([{"query": values["query"], **second}] if second else [])
    assert {name for call in calls for name in call} == declared
    return calls


def run_anthropic_loop(title: str, tool: str, article: str, monkeypatch) -> list[dict]:
    requests: list[list[dict]] = []
    uses = [Obj(type="tool_use", id=f"toolu_{n}", name=tool, input=args)
            for n, args in enumerate(every_argument(tool, article))]
    replies = [Obj(stop_reason="tool_use", content=[Obj(type="text", text="Looking."), *uses]),
               Obj(stop_reason="end_turn", content=[Obj(type="text", text="Python 3.13 adds ...", citations=[])])]

    def create(*, model, max_tokens, messages, tools):
        assert tools[0]["name"] == tool
        requests.append(list(messages))
        return replies[len(requests) - 1]

    fake = types.ModuleType("anthropic")
    fake.Anthropic = lambda: Obj(messages=Obj(create=create))
    monkeypatch.setitem(sys.modules, "anthropic", fake)
    (Path.cwd() / "web_search.json").write_text(json.dumps(
        __import__("plugin.surfaces.schemas", fromlist=["tool_schema"]).tool_schema("anthropic", tool)))
    exec(readme_block(title), {"__name__": "readme"})
    assert len(requests) == 2
    final = requests[-1]
    assert [m["role"] for m in final] == ["user", "assistant", "user"]
    return final[2]["content"]


def test_the_anthropic_loop_with_every_argument(loopback_site, monkeypatch):
    results = run_anthropic_loop("Anthropic tool loop", "web_search", loopback_site, monkeypatch)
    first, second = (block["content"] for block in results)
    assert "error" not in first[:20] and "interactive shell" in first  # read=1, passages=2: the page's passages
    assert "error" not in second[:20]  # the domain filters leave the loopback row out: no rows, no error


def test_the_openai_loop_with_every_argument(loopback_site, monkeypatch):
    requests: list[list[dict]] = []
    calls = [Obj(id=f"call_{n}", type="function", function=Obj(name="web_search", arguments=json.dumps(args)))
             for n, args in enumerate(every_argument("web_search", loopback_site))]
    replies = [Obj(content=None, tool_calls=calls), Obj(content="Python 3.13 adds ...", tool_calls=None)]

    def create(*, model, messages, tools):
        requests.append(json.loads(json.dumps(messages)))
        return Obj(choices=[Obj(message=replies[len(requests) - 1])])

    fake = types.ModuleType("openai")
    fake.OpenAI = lambda: Obj(chat=Obj(completions=Obj(create=create)))
    monkeypatch.setitem(sys.modules, "openai", fake)
    exec(readme_block("OpenAI tool loop"), {"__name__": "readme"})
    final = requests[-1]
    check_openai_messages(final)
    assert "interactive shell" in final[2]["content"] and not final[3]["content"].startswith('{"error"')


def test_the_citing_loop_with_every_argument(loopback_site, monkeypatch):
    """The model sends max_tokens (the schema offers it) along with the loop's own budget: no TypeError,
    and the answer is search_result blocks the model can cite."""
    results = run_anthropic_loop("Anthropic tool loop with citations", "web_fetch", loopback_site, monkeypatch)
    (block,) = results
    assert block["type"] == "tool_result" and isinstance(block["content"], list), block
    (result,) = block["content"]
    assert result["type"] == "search_result" and result["source"] == loopback_site
    assert 1 <= len(result["content"]) <= 2 and "Python 3.13" in result["content"][0]["text"]
