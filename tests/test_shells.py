"""Knowing an app shell when we see one (issue 27, item 1): each sign alone, the pages that are not
shells (an article with a Disqus noscript, an analytics bundle), the real article corpus (not one
flagged), and what every surface says about a shell whatever the render setting (no browser needed:
render=never)."""

from __future__ import annotations

import gzip

import pytest
from hypothesis import given, strategies as st

from pages import ARTICLE_PARAGRAPHS, ROBOTS_OPEN, article_html, routes
from plugin.reading.shells import LONG_TEXT, shell_signs
from standins import page

BUNDLE = "<script src='/static/js/main.3f9a1c.js'></script>"


def body(inner: str, head: str = "") -> str:
    return f"<!DOCTYPE html><html><head><title>t</title>{head}</head><body>{inner}</body></html>"


@pytest.mark.parametrize("html, sign", [
    (body("<div id='root'></div>" + BUNDLE), "an empty mount element (<div id=\"root\">)"),
    (body("<div id=\"__next\">  </div><p>Loading…</p>"), "an empty mount element (<div id=\"__next\">)"),
    (body("<app-root></app-root>"), "an empty mount element (<app-root>)"),
    (body("<noscript>Please enable JavaScript to continue.</noscript><p>Loading</p>"),
     "a noscript that asks for JavaScript"),
    (body("<noscript>This site requires JavaScript.</noscript>"), "a noscript that asks for JavaScript"),
    (body("<p>Loading…</p>" + BUNDLE), "little text (8 characters) against 1 external script"),
    (body("<p>Hi</p><script>" + "var x = 1;" * 300 + "</script>"),
     "little text (2 characters) against 3 kB of inline script"),
    (body("<p>Redirecting…</p>", head="<meta http-equiv='refresh' content='0; url=/home'>"),
     "a client-side redirect (meta refresh)"),
    (body("<script>window.location.href = '/app/';</script>"), "a client-side redirect (a script sets location)"),
])
def test_each_sign_alone(html, sign):
    assert sign in shell_signs(html, main_chars=20)


def test_a_page_of_its_own_text_is_no_shell_whatever_it_carries():
    disqus = "<noscript>Please enable JavaScript to view the comments powered by Disqus.</noscript>"
    analytics = BUNDLE + "<script>" + "track();" * 1000 + "</script>"
    article = article_html(extra_body=disqus + analytics + "<div id='app'></div>")
    assert shell_signs(article, main_chars=1200) == []
    # A JSON data island (Next.js and the like) is data, not script weight.
    data = body("<p>Loading</p><script type='application/json' id='__NEXT_DATA__'>" + "{}" * 5000 + "</script>")
    assert shell_signs(data, main_chars=7) == []
    assert shell_signs(body("<div id='root'><h1>Server-rendered</h1></div>"), main_chars=14) == []


@given(st.text(min_size=0, max_size=200), st.integers(min_value=LONG_TEXT, max_value=10**6))
def test_long_main_text_is_never_a_shell(html, main_chars):
    assert shell_signs("<div id='root'></div><noscript>enable JavaScript</noscript>" + html, main_chars) == []


def test_no_article_of_the_corpus_is_taken_for_a_shell(article_corpus):
    """The 121 real articles (saved with scripts off): none is a shell, whatever length the main text
    the plain read got (0 here: every page goes through every check)."""
    pages = sorted((article_corpus / "html").glob("*.html.gz"))
    assert len(pages) >= 100
    flagged = {path.name: signs for path in pages
               if (signs := shell_signs(gzip.decompress(path.read_bytes()).decode("utf-8", "replace"), 0))}
    assert flagged == {}


@pytest.fixture
def article_corpus():
    from pathlib import Path

    corpus = Path(__file__).resolve().parents[2] / "shared" / "article-corpus"
    if not corpus.exists():
        pytest.skip(f"article corpus not found at {corpus} (../shared is absent)")
    return corpus


# ----- every surface says so (render=never: no browser needed) -----
SHELL = body("<div id='root'></div><noscript>You need to enable JavaScript to run this app.</noscript>" + BUNDLE)
EMPTY_SHELL = body("<div id='app'></div>" + BUNDLE)


async def test_fetch_says_a_shell_may_require_js_and_never_passes_it_off(standins):
    from plugin.reading.reader import Reader
    from plugin.settings import Settings

    site = await standins(routes({"/robots.txt": ROBOTS_OPEN, "/spa": page(SHELL), "/empty": page(EMPTY_SHELL),
                                  "/post": page(article_html())}))
    reader = Reader(Settings(allow_private_hosts="127.0.0.1/32", state_backend="memory", fetch_host_interval_ms=0,
                             render="never"))
    try:
        shell = await reader.fetch(site.url + "/spa")
        assert shell.may_require_js is True and shell.rendered is False
        assert any("built by scripts" in w and "render=never" in w for w in shell.warnings)
        empty = await reader.fetch(site.url + "/empty")  # no text at all: said, not an error
        assert empty.may_require_js is True and empty.content == "" and empty.total_chars == 0
        post = await reader.fetch(site.url + "/post")
        assert post.may_require_js is False and post.rendered is False and post.warnings == []
        assert ARTICLE_PARAGRAPHS[0] in post.content
        with pytest.raises(Exception) as caught:
            await reader.fetch(site.url + "/spa", render="sometimes")
        assert caught.value.code == "invalid_parameter" and caught.value.details["parameter"] == "render"
        assert reader._renderer is None
    finally:
        await reader.close()


async def test_the_http_service_and_the_schema_take_render(standins):
    from aiohttp.test_utils import TestClient, TestServer

    from plugin.settings import Settings
    from plugin.surfaces.schemas import tool_schema
    from plugin.surfaces.service import build_app

    site = await standins(routes({"/robots.txt": ROBOTS_OPEN, "/spa": page(SHELL)}))
    settings = Settings(allow_private_hosts="127.0.0.1/32", state_backend="memory", fetch_host_interval_ms=0)
    async with TestClient(TestServer(build_app(settings))) as client:
        answer = await client.get("/fetch", params={"url": site.url + "/spa", "render": "never"})
        data = await answer.json()
        assert answer.status == 200 and data["may_require_js"] is True and data["rendered"] is False
        bad = await client.get("/fetch", params={"url": site.url + "/spa", "render": "maybe"})
        assert bad.status == 400 and (await bad.json())["error"]["code"] == "invalid_parameter"
    schema = tool_schema("mcp", "web_fetch")
    assert schema["inputSchema"]["properties"]["render"]["anyOf"][0]["enum"] == ["auto", "always", "never"]
    assert {"rendered", "may_require_js"} <= set(schema["outputSchema"]["properties"])


def test_render_setting_is_checked(monkeypatch):
    from plugin.errors import SearchError
    from plugin.settings import Settings

    monkeypatch.setenv("METASEARCH_RENDER", "never")
    monkeypatch.setenv("METASEARCH_CHROMIUM", "/opt/nowhere/chromium")
    settings = Settings()
    assert settings.render == "never" and settings.chromium == "/opt/nowhere/chromium"
    monkeypatch.setenv("METASEARCH_RENDER", "sometimes")
    with pytest.raises(SearchError) as caught:
        Settings()
    assert caught.value.code == "invalid_parameter"


async def test_a_named_chromium_that_is_not_there_is_said(standins, monkeypatch):
    from plugin.reading.reader import Reader
    from plugin.settings import Settings

    site = await standins(routes({"/robots.txt": ROBOTS_OPEN, "/spa": page(SHELL)}))
    reader = Reader(Settings(allow_private_hosts="127.0.0.1/32", state_backend="memory", fetch_host_interval_ms=0,
                             chromium="/opt/nowhere/chromium"))
    try:
        response = await reader.fetch(site.url + "/spa")
        assert response.may_require_js and not response.rendered
        assert any("METASEARCH_CHROMIUM=/opt/nowhere/chromium is not an executable file" in w
                   for w in response.warnings), response.warnings
        always = await reader.fetch(site.url + "/spa", render="always")
        assert not always.rendered
    finally:
        await reader.close()

