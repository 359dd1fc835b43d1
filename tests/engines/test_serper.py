"""Serper: conformance on recorded answers, request building, classification.

The bet__ corpus file is not one raw body: the app that saved it wrote a dict
{query: raw Serper response}; each inner response is fed to the parser separately.
"""

from __future__ import annotations

import json
from datetime import date

import pytest
from corpus_cases import corpus_cases
from conftest import FIXED_NOW, corpus_path, response_from_bytes

from engines.base import SearchOptions
from engines.serper import ENGINE, URL

BET = "bet__atp-tennis-matches-today+laliga-matches-today.json"
# (file, inner query or None for a raw body) -> (status, rows, first title, first URL)
EXPECTED = {
    (BET, "ATP tennis matches today"): (
        "ok", 10, "Tennis ATP & WTA Live Scores", "https://www.espn.com/tennis/scoreboard"),
    (BET, "LaLiga matches today"): (
        "ok", 10, "Spanish La Liga Scores & Fixtures - Sky Sports",
        "https://www.skysports.com/la-liga-scores-fixtures"),
    ("openwebui__apple-inc.json", None): ("ok", 8, "Apple", "https://www.apple.com/"),
}
WRAPPED = {BET}  # files holding {query: raw response}

KEY = "serper-test-key-123"


def bodies(name: str) -> list[tuple[str | None, bytes]]:
    raw = corpus_path("serper", name).read_bytes()
    if name in WRAPPED:
        return [(query, json.dumps(inner).encode()) for query, inner in json.loads(raw).items()]
    return [(None, raw)]


def parse(body: bytes | str, status: int = 200, headers: dict | None = None):
    if isinstance(body, str):
        body = body.encode()
    return ENGINE.parse(response_from_bytes(body, url=URL, status=status, headers=headers), "q",
                        SearchOptions(now=FIXED_NOW))


@pytest.mark.parametrize("name", corpus_cases("serper", "*.json"))
def test_corpus_conformance(name, options):
    seen = 0
    for query, body in bodies(name):
        key = (name, query)
        assert key in EXPECTED, f"new corpus response {key}: add its expectations"
        status, count, title, url = EXPECTED[key]
        parsed = ENGINE.parse(response_from_bytes(body, url=URL), query or "q", options)
        assert parsed.status == status, parsed.detail
        assert len(parsed.rows) == count
        assert parsed.rows[0].title == title
        assert parsed.rows[0].url == url
        assert [row.position for row in parsed.rows] == list(range(1, count + 1))
        for row in parsed.rows:
            assert row.title and row.snippet and row.url.startswith(("http://", "https://"))
        seen += 1
    assert seen == (2 if name in WRAPPED else 1)


def test_wrapper_dict_itself_is_not_understood(options):
    parsed = ENGINE.parse(response_from_bytes(corpus_path("serper", BET).read_bytes()), "q", options)
    assert parsed.status == "error" and parsed.detail.startswith("page not understood")


def test_knowledge_graph_and_people_also_ask_are_not_rows(options):
    raw = corpus_path("serper", "openwebui__apple-inc.json").read_bytes()
    data = json.loads(raw)
    parsed = ENGINE.parse(response_from_bytes(raw), "apple inc", options)
    assert [row.url for row in parsed.rows] == [item["link"] for item in data["organic"]]
    # People-also-ask links that are not organic results (some PAA answers cite organic pages).
    extra = {item["link"] for item in data["peopleAlsoAsk"]} - {item["link"] for item in data["organic"]}
    assert extra == {"https://fourweekmba.com/who-owns-apple/", "https://www.apple.com/business/"}
    assert not extra & {row.url for row in parsed.rows}
    # The dated row: "Aug 31, 2022".
    britannica = parsed.rows[2]
    assert britannica.url == "https://www.britannica.com/topic/Apple-Inc"
    assert britannica.date == date(2022, 8, 31)
    assert parsed.rows[0].date is None


def test_date_on_laliga_row(options):
    (_, body), = [item for item in bodies(BET) if item[0] == "LaLiga matches today"]
    parsed = ENGINE.parse(response_from_bytes(body), "q", options)
    assert parsed.rows[7].title == "Stream LALIGA Videos on Watch ESPN"
    assert parsed.rows[7].date == date(2021, 5, 15)


# --- request building -------------------------------------------------------

def test_build_defaults():
    request = ENGINE.build("apple inc", SearchOptions(api_key=KEY))
    assert request.method == "POST"
    assert request.url == "https://google.serper.dev/search"
    assert request.json == {"q": "apple inc", "num": 10}
    assert request.headers["X-API-KEY"] == KEY
    assert request.headers["Content-Type"] == "application/json"
    assert request.secrets == (KEY,)


def test_build_all_options():
    options = SearchOptions(api_key=KEY, site="apple.com", time_range="year", region="en-US", count=20)
    assert ENGINE.build("iphone", options).json == {
        "q": "iphone site:apple.com", "num": 20, "gl": "us", "hl": "en", "tbs": "qdr:y"}


@pytest.mark.parametrize("region, gl, hl", [("zh-CN", "cn", "zh-cn"), ("zh-TW", "tw", "zh-tw"),
                                            ("de-DE", "de", "de"), ("pt-BR", "br", "pt-br"),
                                            ("zh-Hans-CN", "cn", "zh-cn")])
def test_region(region, gl, hl):
    body = ENGINE.build("q", SearchOptions(api_key=KEY, region=region)).json
    assert (body["gl"], body["hl"]) == (gl, hl)


@pytest.mark.parametrize("time_range, tbs", [("day", "qdr:d"), ("week", "qdr:w"), ("month", "qdr:m"),
                                             ("year", "qdr:y")])
def test_tbs(time_range, tbs):
    assert ENGINE.build("q", SearchOptions(api_key=KEY, time_range=time_range)).json["tbs"] == tbs


# --- classification ----------------------------------------------------------

@pytest.mark.parametrize("body", [
    '{"searchParameters":{"q":"zzqx","type":"search","engine":"google"},"organic":[],"credits":1}',
    '{"searchParameters":{"q":"zzqx","type":"search","engine":"google"},"credits":1}',
])
def test_empty(body):
    assert parse(body).status == "empty"


@pytest.mark.parametrize("status", [401, 403])
def test_bad_key(status):
    parsed = parse('{"message":"Unauthorized.","statusCode":403}', status=status)
    assert parsed.status == "error"
    assert parsed.detail == f"API key rejected (HTTP {status}): Unauthorized."


def test_no_credits_is_quota():
    parsed = parse('{"message":"Not enough credits","statusCode":400}', status=400)
    assert parsed.status == "ratelimited"
    assert "quota" in parsed.detail


def test_429():
    parsed = parse('{"message":"Too many requests"}', status=429, headers={"Retry-After": "5"})
    assert (parsed.status, parsed.retry_after) == ("ratelimited", 5.0)


def test_500():
    parsed = parse("Internal Server Error", status=500)
    assert parsed.status == "error" and parsed.detail == "HTTP 500"
