"""What a person at a terminal and a model in a harness read: the CLI's table and the model's text, as a
newcomer meets them (an offline machine, engines failing alike, a detail longer than its column)."""

from __future__ import annotations

from plugin.models import EngineReport, SearchResponse
from plugin.surfaces.render import render_for_model, render_table

OFFLINE = "network unreachable (connection failed: (6) Could not resolve host: {host} (Domain name not found))"
HOSTS = {"duckduckgo-html": "html.duckduckgo.com", "bing": "www.bing.com", "brave": "search.brave.com",
         "mojeek": "www.mojeek.com"}


def offline_response() -> SearchResponse:
    return SearchResponse(query="rust async", results=[], partial=True, elapsed_ms=40, warnings=[
        "network unreachable: every engine tried failed to connect (DNS or connection error); this machine looks "
        "offline, so no engine was benched for it"], engines=[
        EngineReport(name=name, tier="primary", status="error", latency_ms=5, detail=OFFLINE.format(host=host))
        for name, host in HOSTS.items()])


def test_a_detail_cut_to_fit_the_table_says_it_was_cut_and_where_to_read_it_whole():
    """The table cut `… Could not resolve host: html.duckduc` mid-name with nothing to show it: a reader took
    the host for the one asked. A cut detail ends in `…`, and a line under the table says how to see it."""
    table = render_table(offline_response())
    line = next(line for line in table.splitlines() if line.startswith("duckduckgo-html "))
    assert line.endswith("…") and "html.duckduc" not in line.replace("html.duckduckgo.com", "")
    assert "--verbose" in table.splitlines()[-1] and "whole" in table.splitlines()[-1]
    verbose = render_table(offline_response(), verbose=True)
    assert OFFLINE.format(host="html.duckduckgo.com") in verbose and "…" not in verbose
    short = offline_response().model_copy(update={"engines": [
        EngineReport(name="bing", tier="primary", status="timeout", detail="no complete answer within 15000 ms")]})
    assert "…" not in render_table(short) and "--verbose" not in render_table(short)


def test_engines_failing_alike_are_named_together_in_the_model_s_text():
    """Offline, the model's text gave every engine its own clause, `bing (error: network unreachable
    (connection failed: (6) Could not resolve host: www.bing.com (Domain name not found)))`, twelve times
    over (about 1,400 characters that say one thing, which the warning says too). Engines whose detail
    says the same thing before its parenthesis are named together under it; an engine failing its own way
    keeps its whole detail."""
    response = offline_response()
    text = render_for_model(response)
    assert ("engines answered: none; not answered: duckduckgo-html, bing, brave, mojeek (error: network "
            "unreachable)") in text
    assert "Could not resolve host" not in text
    alone = response.model_copy(update={"engines": [
        response.engines[0], EngineReport(name="tavily", tier="primary", status="error",
                                          detail="HTTP 432 (plan limit reached)"),
        EngineReport(name="yahoo", tier="fallback", status="timeout"),
        EngineReport(name="startpage", tier="fallback", status="timeout"),
        EngineReport(name="exa", tier="primary", status="ok", rows=3, kept=3)]})
    text = render_for_model(alone)
    assert "engines answered: exa; not answered: " in text
    assert f"duckduckgo-html (error: {OFFLINE.format(host='html.duckduckgo.com')})" in text
    assert "tavily (error: HTTP 432 (plan limit reached))" in text and "yahoo, startpage (timeout)" in text


def test_a_read_error_cut_to_fit_says_it_was_cut():
    """`page not read: http_error: … no copy of https://py` ended mid-address with nothing to show it."""
    from plugin.models import ReadFailure, ResultRow

    message = ("pydantic.dev: a replay reads nothing from the network, and the recordings hold no copy of "
               "https://pydantic.dev/docs/ai/overview/")
    row = ResultRow(title="Pydantic AI", url="https://pydantic.dev/docs/ai/overview/", snippet="", score=1.0,
                    domain="pydantic.dev", engines=["exa"], read_error=ReadFailure(code="http_error", message=message))
    response = SearchResponse(query="pydantic ai", results=[row], partial=False, elapsed_ms=5,
                              engines=[EngineReport(name="exa", tier="primary", status="ok", rows=1, kept=1)])
    table = render_table(response)
    line = next(line for line in table.splitlines() if "page not read" in line)
    assert line.endswith(" …") and "https://py" not in line and "--verbose" in table.splitlines()[-1]
    assert message in render_table(response, verbose=True)
    short = row.model_copy(update={"read_error": ReadFailure(code="timeout", message="no answer within 1500 ms")})
    assert render_table(response.model_copy(update={"results": [short]})).count(
        "page not read: timeout: no answer within 1500 ms\n") == 1
