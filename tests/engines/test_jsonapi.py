"""The helpers the JSON-API engines share (engines/jsonapi.py)."""

from __future__ import annotations

import pytest
from conftest import response_from_bytes

from engines.base import Parsed, SearchOptions
from engines.jsonapi import (
    SNIPPET_CHARS,
    country_of,
    error_message,
    header_retry_after,
    is_web_url,
    keyed_failure,
    keyed_request,
    language_of,
    linked,
    load_json,
    plain_text,
    results_array,
    trim,
)


def response(body: bytes | str = b"{}", status: int = 200, headers: dict | None = None):
    if isinstance(body, str):
        body = body.encode()
    return response_from_bytes(body, status=status, headers=headers)


# --- reading the answer ------------------------------------------------------

def test_load_json():
    assert load_json(response('{"a": [1, 2]}')) == {"a": [1, 2]}
    assert load_json(response("null")) is None
    for body in (b"", b"not json", b"\x1f\x8b\x08garbage", b"<html></html>"):
        assert load_json(response(body)) is None


def test_load_json_survives_deep_nesting():
    assert load_json(response("[" * 100_000 + "]" * 100_000)) is None


def test_error_message_takes_the_first_non_blank_string_in_key_order():
    data = {"error": "  ", "message": 5, "detail": "  Bad key \n"}
    assert error_message(data, ("error", "message", "detail")) == "Bad key"
    assert error_message({"message": "m", "error": "e"}, ("message", "error")) == "m"
    assert error_message({"error": "x" * 500}, ("error",)) == "x" * 160
    assert error_message(["error"], ("error",)) == ""
    assert error_message({"other": "x"}, ("error",)) == ""


def test_is_web_url():
    assert is_web_url("https://a.example/") and is_web_url("http://a.example/")
    for value in ("javascript:alert(1)", "/relative", "//a.example/", "", None, 5, ["https://a.example/"]):
        assert not is_web_url(value)


def test_results_array():
    assert results_array({"results": [1]}, "") == [1]
    assert results_array({"results": []}, "oops") == Parsed("empty", detail="no results")
    assert results_array([1], "") == Parsed("error", detail="page not understood: response is not a JSON object")
    assert results_array({"results": {}}, "") == Parsed("error", detail="page not understood: no results array")
    assert results_array({}, "Invalid query") == Parsed(
        "error", detail="page not understood: no results array: Invalid query")


def test_linked_keeps_objects_with_a_web_link():
    good = {"url": "https://a.example/", "title": "A"}
    results = [None, "x", {"url": 5}, {"url": "javascript:alert(1)"}, good, {"link": "https://b.example/"}]
    assert list(linked(results)) == [(good, "https://a.example/")]
    assert list(linked(results, "link")) == [({"link": "https://b.example/"}, "https://b.example/")]


# --- text ----------------------------------------------------------------------

def test_plain_text():
    assert plain_text("  Tom &amp; Jerry\n\t<b>x</b>  ") == "Tom & Jerry <b>x</b>"
    assert plain_text(None) == "" and plain_text(5) == ""
    # Text that merely looks like a legacy entity name stays as written; complete entities decode.
    assert plain_text("see &section 3 &notes, AT&T &#39;ok&#x27;") == "see &section 3 &notes, AT&T 'ok'"


def test_trim_short_text_is_unchanged():
    assert trim("short, text;") == "short, text;"
    assert trim("x" * SNIPPET_CHARS) == "x" * SNIPPET_CHARS


def test_trim_cuts_at_a_word_and_adds_an_ellipsis():
    text = "word " * 100
    cut = trim(text)
    assert cut.endswith("word…") and len(cut) <= SNIPPET_CHARS + 1
    assert trim("alpha beta, gamma delta", limit=20) == "alpha beta, gamma…"
    # Punctuation left dangling at the cut goes.
    assert trim("alpha beta, gamma delta", limit=17) == "alpha beta…"


def test_trim_without_a_late_space_cuts_mid_word():
    text = "short " + "x" * 600
    assert trim(text) == ("short " + "x" * 600)[:SNIPPET_CHARS] + "…"


# --- regions -------------------------------------------------------------------

@pytest.mark.parametrize("region, country", [
    ("en-US", "US"), ("en_gb", "GB"), ("zh-Hans-CN", "CN"), ("sr-Latn-RS", "RS"), ("es-419", None),
    ("en", None), ("", None), (None, None), ("-us", "US"),
])
def test_country_of(region, country):
    assert country_of(region) == country


@pytest.mark.parametrize("region, lang", [("pt_BR", "pt"), ("EN-us", "en"), ("zh-Hans-CN", "zh"), ("ja", "ja")])
def test_language_of(region, lang):
    assert language_of(region) == lang


# --- keyed APIs ----------------------------------------------------------------

def test_keyed_request_post_with_json_body():
    request = keyed_request("POST", "https://api.example/search", SearchOptions(api_key="k1"), "Authorization",
                            "Bearer ", body={"q": "x"})
    assert (request.method, request.url, request.json, request.params) == (
        "POST", "https://api.example/search", {"q": "x"}, ())
    assert request.headers["Authorization"] == "Bearer k1"
    assert request.headers["Content-Type"] == "application/json"
    assert request.headers["Accept"] == "application/json"
    assert request.secrets == ("k1",)


def test_keyed_request_get_without_key():
    request = keyed_request("GET", "https://api.example/", SearchOptions(), "X-Token", params=(("q", "x"),))
    assert request.params == (("q", "x"),) and request.json is None
    assert "Content-Type" not in request.headers
    assert request.headers["X-Token"] == ""
    assert request.secrets == ()


def test_header_retry_after():
    assert header_retry_after(response(headers={"Retry-After": "12"})) == 12.0
    assert header_retry_after(response()) is None


def test_keyed_failure_2xx_is_none():
    assert keyed_failure(response(status=200), "quota", "Svc") is None
    assert keyed_failure(response(status=204), "", "Svc") is None


@pytest.mark.parametrize("status", [401, 403])
def test_keyed_failure_rejected_key_is_an_error(status):
    parsed = keyed_failure(response(status=status), "Invalid API key", "Svc")
    assert parsed == Parsed("error", detail=f"API key rejected (HTTP {status}): Invalid API key")


def test_keyed_failure_quota_by_status_or_word():
    parsed = keyed_failure(response(status=402, headers={"Retry-After": "60"}), "", "Svc")
    assert parsed == Parsed("ratelimited", detail="Svc quota exhausted (HTTP 402)", retry_after=60.0)
    parsed = keyed_failure(response(status=400), "You have run out of credits", "Svc")
    assert parsed.status == "ratelimited"
    assert parsed.detail == "Svc quota exhausted (HTTP 400): You have run out of credits"


def test_keyed_failure_engine_specific_quota_rules():
    # Tavily: quota by status alone.
    assert keyed_failure(response(status=432), "", "Tavily", quota_statuses=(402, 432, 433)).status == "ratelimited"
    parsed = keyed_failure(response(status=400), "quota", "Tavily", quota_statuses=(402, 432, 433), quota_words=())
    assert parsed == Parsed("error", detail="HTTP 400: quota")
    # Serper-style wording.
    parsed = keyed_failure(response(status=400), "Not enough credits", "Serper", quota_noun="quota/credits",
                           quota_words=("credits", "quota"))
    assert parsed.detail == "Serper quota/credits exhausted (HTTP 400): Not enough credits"


def test_keyed_failure_flags_from_error_codes():
    parsed = keyed_failure(response(status=422), "SUBSCRIPTION_TOKEN_INVALID", "Brave API", key_rejected=True)
    assert parsed == Parsed("error", detail="API key rejected (HTTP 422): SUBSCRIPTION_TOKEN_INVALID")
    parsed = keyed_failure(response(status=429), "QUOTA_LIMITED", "Brave API", quota_exhausted=True,
                           wait=lambda _: 86400.0)
    assert parsed == Parsed("ratelimited", detail="Brave API quota exhausted (HTTP 429): QUOTA_LIMITED",
                            retry_after=86400.0)


def test_keyed_failure_429():
    parsed = keyed_failure(response(status=429, headers={"Retry-After": "30"}), "slow down", "Svc")
    assert parsed == Parsed("ratelimited", detail="HTTP 429: slow down", retry_after=30.0)
    parsed = keyed_failure(response(status=429), "", "Svc", wait=lambda _: 2.0, rate_limit_detail="HTTP 429 rate limit")
    assert parsed == Parsed("ratelimited", detail="HTTP 429 rate limit", retry_after=2.0)


def test_keyed_failure_other_statuses_follow_http_failure():
    assert keyed_failure(response(status=500), "boom", "Svc") == Parsed("error", detail="HTTP 500: boom")
    parsed = keyed_failure(response(status=503, headers={"Retry-After": "5"}), "", "Svc")
    assert parsed == Parsed("ratelimited", detail="HTTP 503 with Retry-After", retry_after=5.0)
    parsed = keyed_failure(response(status=451), "", "Svc")
    assert parsed == Parsed("blocked", detail="HTTP 451")
    # A wait function only serves quota and 429 answers; elsewhere Retry-After alone counts.
    parsed = keyed_failure(response(status=503), "", "Svc", wait=lambda _: 9.0)
    assert parsed == Parsed("error", detail="HTTP 503")
