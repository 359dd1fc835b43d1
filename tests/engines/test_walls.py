"""Bot walls no engine's own check knows: recognised by generic markers, for every engine alike."""

from __future__ import annotations

import pytest

from conftest import response_from_bytes
from engines import ENGINES
from engines.base import SearchOptions

CLOUDFLARE = (b'<!DOCTYPE html><html><head><title>Just a moment...</title></head><body>'
              b'<div id="challenge-stage"></div><script src="/cdn-cgi/challenge-platform/h/b/orchestrate/chl_page/v1">'
              b'</script></body></html>')
HCAPTCHA = b'<html><body><form id="f"><div class="h-captcha" data-sitekey="x"></div></form></body></html>'
UNUSUAL = (b"<html><body><p>Our systems have detected unusual traffic from your computer network.</p>"
           b"</body></html>")
CHINESE = "<html><body><div>网络环境存在异常，请完成人机验证后继续访问</div></body></html>".encode()
TOO_MANY = b"<html><head><title>429</title></head><body><h1>Too Many Requests</h1></body></html>"


@pytest.mark.parametrize("name", ["bing", "duckduckgo-html", "brave", "mojeek", "yahoo", "startpage", "baidu",
                                  "duckduckgo-lite", "bing-cn", "sogou", "so360"])
@pytest.mark.parametrize(("body", "status", "expected"), [
    (CLOUDFLARE, 200, "blocked"), (CLOUDFLARE, 503, "blocked"), (HCAPTCHA, 200, "blocked"),
    (UNUSUAL, 503, "blocked"), (CHINESE, 200, "blocked"), (TOO_MANY, 200, "ratelimited"),
])
def test_generic_walls(name, body, status, expected):
    parsed = ENGINES[name].parse(response_from_bytes(body, status=status), "q", SearchOptions())
    assert parsed.status == expected, parsed.detail


def test_a_result_page_that_mentions_captcha_keeps_its_rows():
    page = (b'<ol id="b_results"><li class="b_algo"><h2><a href="https://en.wikipedia.org/wiki/CAPTCHA">'
            b'CAPTCHA - Wikipedia</a></h2><div class="b_caption"><p>A CAPTCHA is a test</p></div></li></ol>')
    parsed = ENGINES["bing"].parse(response_from_bytes(page), "captcha", SearchOptions())
    assert parsed.status == "ok" and len(parsed.rows) == 1


def test_markers_inside_scripts_do_not_count():
    page = b'<html><body><script>var s = "verify you are human captcha";</script><div id="x"></div></body></html>'
    parsed = ENGINES["mojeek"].parse(response_from_bytes(page), "q", SearchOptions())
    assert parsed.status == "error" and parsed.detail.startswith("page not understood")


def test_json_bodies_are_never_taken_for_walls():
    for body in (b'"CAPTCHA"', b'{"message": "captcha required"}', b"Too Many Requests captcha"):
        parsed = ENGINES["tavily"].parse(response_from_bytes(body), "q", SearchOptions(api_key="k"))
        assert parsed.status != "blocked"
