"""The pipeline end to end against loopback stand-in engines (real HTTP on 127.0.0.1)."""

from __future__ import annotations

import time

import pytest

from plugin.infra.cooldown import Cooldowns
from plugin.pipeline.searcher import Searcher
from plugin.settings import Settings
from standins import bing_no_results, bing_page, ddg_page, ddg_wrapped, hang, page, sequence

PY_ROWS = [
    ("Python Release Notes", "https://docs.python.org/3/whatsnew/3.13.html", "What's new in Python 3.13 release"),
    ("Python downloads", "https://www.python.org/downloads/", "Download Python releases notes"),
    ("Python 3.13 release notes explained", "https://realpython.com/python313-new-features/",
     "Python 3.13 release notes"),
]


def searcher(endpoints: dict[str, str], **settings) -> Searcher:
    settings.setdefault("engines", list(endpoints))
    return Searcher(Settings(endpoints=endpoints, **settings))


async def test_engines_are_queried_concurrently(standins):
    delay = 0.6
    engines = {
        "bing": await standins(page(bing_page(PY_ROWS), delay=delay)),
        "bing-cn": await standins(page(bing_page(PY_ROWS[:1]), delay=delay)),
        "duckduckgo-html": await standins(page(ddg_page(PY_ROWS[1:]), delay=delay)),
    }
    s = searcher({name: st.url for name, st in engines.items()})
    started = time.monotonic()
    response = await s.search("python release notes")
    elapsed = time.monotonic() - started
    await s.close()
    assert [e.status for e in response.engines] == ["ok", "ok", "ok"]
    # Every request arrived before any engine had answered: they were in flight together.
    arrivals = [st.requests[0].arrived for st in engines.values()]
    answers = [st.finished[0] for st in engines.values()]
    assert max(arrivals) < min(answers)
    # And the whole search took about one delay, not the sum of three (generous bound).
    assert elapsed < 3 * delay - 0.2


async def test_hung_engine_is_cut_at_its_deadline_and_others_rows_come_back(standins):
    good = await standins(page(bing_page(PY_ROWS)))
    stuck = await standins(hang(30))
    s = searcher({"bing": good.url, "duckduckgo-html": stuck.url}, timeout_ms=700)
    started = time.monotonic()
    response = await s.search("python release notes")
    elapsed = time.monotonic() - started
    await s.close()
    statuses = {e.name: e.status for e in response.engines}
    assert statuses == {"bing": "ok", "duckduckgo-html": "timeout"}
    assert len(response.results) == 3
    assert response.partial is True
    assert elapsed < 5  # the deadline (0.7 s) bounds it, far below the 30 s hang


async def test_body_that_drips_is_cut_by_the_same_deadline(standins):
    from standins import drip

    slow = await standins(drip(bing_page(PY_ROWS).encode(), interval=0.5, chunk=20))
    s = searcher({"bing": slow.url}, timeout_ms=800)
    response = await s.search("python release notes")
    await s.close()
    assert response.engines[0].status == "timeout"


class FakeClock:
    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


async def test_cooldown_skips_escalates_and_resets(standins):
    behaviour_state = {"fail": True}

    async def flaky(request, standin):
        from aiohttp import web

        if behaviour_state["fail"]:
            return web.Response(status=503, text="unavailable")
        return web.Response(text=bing_page(PY_ROWS), content_type="text/html")

    engine = await standins(flaky)
    s = searcher({"bing": engine.url}, cooldown_timeout_s=30, cooldown_growth=2)
    clock = FakeClock()
    s.cooldowns = Cooldowns(s.settings, s.cooldowns.store, clock=clock)

    first = await s.search("python release notes")
    assert first.engines[0].status == "error" and "HTTP 503" in first.engines[0].detail
    entry = await s.cooldowns.store.get(s.settings.upstream("bing"))
    assert entry.failures == 1 and entry.until - clock.now == pytest.approx(30)

    second = await s.search("python release notes")
    assert second.engines[0].status == "cooldown"
    assert len(engine.requests) == 1  # the cooling engine was not asked again
    assert second.partial is True

    clock.now += 31  # window over: asked again, fails again, window doubles
    third = await s.search("python release notes")
    assert third.engines[0].status == "error"
    entry = await s.cooldowns.store.get(s.settings.upstream("bing"))
    assert entry.failures == 2 and entry.until - clock.now == pytest.approx(60)

    clock.now += 61
    behaviour_state["fail"] = False
    fourth = await s.search("python release notes")
    assert fourth.engines[0].status == "ok"
    assert await s.cooldowns.store.get(s.settings.upstream("bing")) is None  # success resets
    await s.close()


async def test_a_zero_window_says_no_cooldown(standins):
    engine = await standins(page("unavailable", status=503))
    s = searcher({"bing": engine.url}, cooldown_timeout_s=0)
    response = await s.search("python release notes")
    await s.close()
    detail = response.engines[0].detail
    assert response.engines[0].status == "error" and "HTTP 503" in detail
    assert "cooling down" not in detail, detail  # was "cooling down -0s"



async def test_cooldown_windows_depend_on_the_failure_and_honour_retry_after(standins):
    limited = await standins(page("slow down", status=429, headers={"Retry-After": "7200"}))
    captcha = await standins(page('<html><body><div class="captcha"><div class="captcha_header">One last step'
                                  '</div></div></body></html>'))
    s = searcher({"bing": limited.url, "bing-cn": captcha.url},
                 cooldown_ratelimited_s=300, cooldown_blocked_s=1800, cooldown_timeout_s=30)
    clock = FakeClock()
    s.cooldowns = Cooldowns(s.settings, s.cooldowns.store, clock=clock)
    response = await s.search("python release notes")
    statuses = {e.name: e.status for e in response.engines}
    assert statuses == {"bing": "ratelimited", "bing-cn": "blocked"}
    assert (await s.cooldowns.store.get(s.settings.upstream("bing"))).until - clock.now == pytest.approx(7200)  # Retry-After wins
    assert (await s.cooldowns.store.get(s.settings.upstream("bing-cn"))).until - clock.now == pytest.approx(1800)
    await s.close()


async def test_fallback_runs_only_when_the_primaries_keep_fewer_than_limit_rows(standins):
    primary = await standins(page(bing_page(PY_ROWS)))
    fallback = await standins(page(ddg_page(PY_ROWS)))
    tiers = {"bing": "primary", "duckduckgo-html": "fallback"}
    s = searcher({"bing": primary.url, "duckduckgo-html": fallback.url}, tiers=tiers)
    response = await s.search("python release notes", limit=3)  # the primary's three rows are enough
    assert {e.name: e.status for e in response.engines} == {"bing": "ok", "duckduckgo-html": "skipped"}
    assert fallback.requests == []

    # Now the primary answers with pages about something else: irrelevant, so the fallback runs.
    primary.behaviour = page(bing_page([("Cat pictures", "https://cats.example.com/", "cute cats"),
                                        ("Dog food", "https://dogs.example.com/", "kibble")]))
    response = await s.search("python release notes", limit=3)
    await s.close()
    assert {e.name: e.status for e in response.engines} == {"bing": "irrelevant", "duckduckgo-html": "ok"}
    assert len(fallback.requests) == 1
    assert all("duckduckgo-html" in row.engines for row in response.results)


async def test_fallback_runs_when_primary_fails(standins):
    primary = await standins(page("oops", status=500))
    fallback = await standins(page(ddg_page(PY_ROWS)))
    s = searcher({"bing": primary.url, "duckduckgo-html": fallback.url},
                 tiers={"bing": "primary", "duckduckgo-html": "fallback"})
    response = await s.search("python release notes")
    await s.close()
    assert {e.name: e.status for e in response.engines} == {"bing": "error", "duckduckgo-html": "ok"}
    assert response.partial is True and len(response.results) == 3


JUNK_AND_GOOD = [
    ("定位_百度百科", "https://baike.baidu.com/item/定位/1", "定位，汉语词语，读音为dìng wèi，指确定方位"),
    ("国家_百度百科", "https://baike.baidu.com/item/国家/2", "国家是指拥有共同的语言、文化、种族"),
    ("东数西算工程八大国家算力枢纽节点的定位与布局", "https://www.ndrc.gov.cn/xxgk/jd/202202/t20220217.html",
     "东数西算 工程在京津冀、长三角等地布局建设国家算力枢纽节点，明确各枢纽节点的定位"),
    ("节点_百度百科", "https://baike.baidu.com/item/节点/3", "节点是网络任何支路的终端"),
]


async def test_cjk_gate_drops_dictionary_junk(standins):
    engine = await standins(page(bing_page(JUNK_AND_GOOD)))
    s = searcher({"bing-cn": engine.url})
    response = await s.search("东数西算 八个国家枢纽节点 定位")
    await s.close()
    assert [r.url for r in response.results] == ["https://www.ndrc.gov.cn/xxgk/jd/202202/t20220217.html"]
    report = response.engines[0]
    assert (report.status, report.rows, report.kept) == ("ok", 4, 1)


async def test_cjk_gate_keeps_mixed_query_on_ascii_word_alone(standins):
    rows = [("PostgreSQL: Documentation: 17: Logical Replication", "https://www.postgresql.org/docs/current/"
             "logical-replication.html", "Logical replication is a method of replicating data objects"),
            ("如何（汉语词语）_百度百科", "https://baike.baidu.com/item/如何/4", "如何，汉语词语，意思是怎么，怎么样")]
    engine = await standins(page(bing_page(rows)))
    s = searcher({"bing-cn": engine.url})
    response = await s.search("如何配置 postgres 逻辑复制")
    await s.close()
    assert [r.domain for r in response.results] == ["postgresql.org"]


async def test_latin_gate_drops_a_list_answering_another_query(standins):
    love_poems = [
        ("99+ Bài Thơ Tình Ngọt Ngào", "https://chanhtuoi.com/tho-tinh.html", "Tuyển tập thơ tình hay, lãng mạn"),
        ("Tình yêu – Wikipedia tiếng Việt", "https://vi.wikipedia.org/wiki/Tình_yêu", "Tình yêu, ái tình"),
        ("Tình - Văn Phụng | Lời bài hát", "https://loibaihat.example.vn/tinh", "Lời bài hát Tình"),
        ("Tra từ: tình - Từ điển Hán Nôm", "https://hvdic.example.vn/tinh", "tình"),
    ]
    weather = [
        ("Dự báo thời tiết Hà Nội hôm nay", "https://nchmf.gov.vn/thoi-tiet", "Tình hình thời tiết Hà Nội"),
        ("Thời tiết 10 ngày tới", "https://thoitiet.example.vn/", "Cập nhật tình hình thời tiết mới nhất"),
    ]
    bing = await standins(page(bing_page(love_poems)))
    ddg = await standins(page(ddg_page(weather)))
    s = searcher({"bing": bing.url, "duckduckgo-html": ddg.url})
    response = await s.search("tình hình thời tiết")
    await s.close()
    statuses = {e.name: e.status for e in response.engines}
    assert statuses == {"bing": "irrelevant", "duckduckgo-html": "ok"}
    assert {r.domain for r in response.results} == {"nchmf.gov.vn", "example.vn"}


async def test_latin_gate_keeps_ordinary_english_lists_whole(standins):
    rows = PY_ROWS + [("What's New In Python", "https://docs.python.org/3/whatsnew/", "Changelog and notes")]
    engine = await standins(page(bing_page(rows)))
    s = searcher({"bing": engine.url})
    response = await s.search("python release notes")
    await s.close()
    assert response.engines[0].kept == 4


async def test_rows_from_different_engines_merge_into_one(standins):
    bing = await standins(page(bing_page([
        ("Python 3.13 release notes", "https://docs.python.org/3/whatsnew/3.13.html?utm_source=bing&msclkid=9",
         "short"),
        ("Python downloads", "https://www.python.org/downloads/", "Download Python"),
    ])))
    ddg = await standins(page(ddg_page([
        ("Python downloads", "https://python.org/downloads", "Download Python release notes"),
        ("What's New In Python 3.13 — Python 3.13 documentation",
         ddg_wrapped("https://docs.python.org/3/whatsnew/3.13.html#summary"), "A much longer snippet about "
         "what is new in the Python 3.13 release"),
    ])))
    s = searcher({"bing": bing.url, "duckduckgo-html": ddg.url})
    response = await s.search("python 3.13 release notes")
    await s.close()
    assert len(response.results) == 2
    by_url = {r.url: r for r in response.results}
    notes = by_url["https://docs.python.org/3/whatsnew/3.13.html"]
    assert sorted(notes.engines) == ["bing", "duckduckgo-html"]
    assert notes.positions == {"bing": 1, "duckduckgo-html": 2}
    assert notes.snippet.startswith("A much longer snippet")
    assert notes.title == "What's New In Python 3.13 — Python 3.13 documentation"
    downloads = [r for r in response.results if r.domain == "python.org" and "downloads" in r.url]
    assert len(downloads) == 1 and sorted(downloads[0].engines) == ["bing", "duckduckgo-html"]


# A long CJK query's first page (a dictionary entry for one of its function words) and the page its core
# words find.
LONG_QUERY_JUNK = bing_page([("如何（汉语词语）_百度百科", "https://baike.baidu.com/item/如何", "如何，汉语词语")])
LONG_QUERY_GOOD = bing_page([("Kubernetes 滚动更新 配置 指南", "https://kubernetes.io/zh-cn/docs/rolling-update/",
                              "在 Kubernetes 中配置 Deployment 的滚动更新策略")])


async def test_core_word_retry_for_a_long_cjk_query(standins):
    engine = await standins(sequence(page(LONG_QUERY_JUNK), page(LONG_QUERY_GOOD)))
    s = searcher({"bing-cn": engine.url})
    response = await s.search("请问如何在集群中配置滚动更新策略呢")
    await s.close()
    queries = engine.queries()
    assert len(queries) == 2
    assert queries[0].startswith("请问如何在集群中配置滚动更新策略呢")
    assert "请问" not in queries[1] and "如何" not in queries[1] and "配置滚动更新策略" in queries[1]
    assert response.engines[0].status == "ok"
    assert response.engines[0].detail == f"retried with core words {queries[1]!r}"
    assert response.results[0].domain == "kubernetes.io"


async def test_a_long_cjk_query_that_finds_nothing_is_retried_with_its_core_words(standins):
    engine = await standins(sequence(page(bing_no_results("请问如何在集群中配置滚动更新策略呢")), page(LONG_QUERY_GOOD)))
    s = searcher({"bing-cn": engine.url})
    response = await s.search("请问如何在集群中配置滚动更新策略呢")
    await s.close()
    assert len(engine.requests) == 2 and response.engines[0].status == "ok"
    assert response.results[0].domain == "kubernetes.io"


async def test_a_cached_core_word_answer_says_it_was_retried(standins, monkeypatch):
    """The cache keeps the core-word variant with the answer; served from it, the engine's report is the
    one the search that asked got (cached, and retried with those words), and the engine is not asked."""
    monkeypatch.setenv("METASEARCH_CACHE_TTL_S", "300")
    engine = await standins(sequence(page(LONG_QUERY_JUNK), page(LONG_QUERY_GOOD)))
    s = searcher({"bing-cn": engine.url})
    first = await s.search("请问如何在集群中配置滚动更新策略呢")
    again = await s.search("请问如何在集群中配置滚动更新策略呢", page=1)
    await s.close()
    assert len(engine.requests) == 2  # the first search's two; none for the second
    assert again.engines[0].cached and again.engines[0].status == "ok"
    assert again.engines[0].detail == first.engines[0].detail and "retried with core words" in first.engines[0].detail
    assert [r.url for r in again.results] == [r.url for r in first.results]


async def test_no_core_word_retry_when_the_first_answer_has_rows(standins):
    good = bing_page([("集群中配置滚动更新策略", "https://kubernetes.io/zh-cn/docs/x/", "配置滚动更新策略的方法")])
    engine = await standins(page(good))
    s = searcher({"bing-cn": engine.url})
    await s.search("请问如何在集群中配置滚动更新策略呢")
    await s.close()
    assert len(engine.requests) == 1


async def test_one_engine_raising_never_fails_the_search(standins, monkeypatch):
    from engines import ENGINES

    def broken(*args, **kwargs):
        raise RuntimeError("parser bug")

    monkeypatch.setattr(ENGINES["duckduckgo-html"], "parse", broken)
    bing = await standins(page(bing_page(PY_ROWS)))
    ddg = await standins(page(ddg_page(PY_ROWS)))
    s = searcher({"bing": bing.url, "duckduckgo-html": ddg.url})
    response = await s.search("python release notes")
    await s.close()
    statuses = {e.name: (e.status, e.detail) for e in response.engines}
    assert statuses["bing"][0] == "ok"
    assert statuses["duckduckgo-html"][0] == "error" and "parser bug" in statuses["duckduckgo-html"][1]


async def test_limit_is_clamped_and_results_cut(standins):
    rows = [(f"Python notes part {i}", f"https://example{i}.org/python-notes", "python release notes")
            for i in range(30)]
    engine = await standins(page(bing_page(rows)))
    s = searcher({"bing": engine.url})
    assert len((await s.search("python release notes")).results) == 8
    assert len((await s.search("python release notes", limit=100)).results) == 20
    assert len((await s.search("python release notes", limit=0)).results) == 1
    assert len((await s.search("python release notes", limit="3")).results) == 3
    await s.close()


async def test_ddg_rate_limit_202_and_endpoint_rewrite(standins):
    engine = await standins(page("", status=202))
    s = searcher({"duckduckgo-html": engine.url})
    response = await s.search("python")
    await s.close()
    assert response.engines[0].status == "ratelimited"
    seen = engine.requests[0]
    assert seen.method == "POST" and seen.path == "/html/" and seen.form["q"] == ["python"]


async def test_charset_of_a_gbk_page_is_decoded(standins):
    body = bing_page([("东数西算工程国家枢纽节点", "https://www.gov.cn/x", "东数西算 国家枢纽节点 定位")])
    body = body.replace("<html>", '<html><head><meta charset="gbk"></head>').encode("gbk")
    engine = await standins(page(body, content_type="text/html"))
    s = searcher({"bing-cn": engine.url})
    response = await s.search("东数西算 枢纽节点")
    await s.close()
    assert response.results[0].title == "东数西算工程国家枢纽节点"


async def test_response_size_cap_is_enforced(standins):
    big = bing_page(PY_ROWS) + "<!--" + "x" * 300_000 + "-->"
    engine = await standins(page(big))
    s = searcher({"bing": engine.url}, max_response_bytes=100_000)
    response = await s.search("python release notes")
    await s.close()
    assert response.engines[0].status == "error"
    assert "cap" in response.engines[0].detail


async def test_gzip_bodies_are_decompressed_and_counted_against_the_cap(standins):
    import gzip

    body = gzip.compress(bing_page(PY_ROWS).encode())
    engine = await standins(page(body, headers={"Content-Encoding": "gzip"}))
    s = searcher({"bing": engine.url})
    response = await s.search("python release notes")
    assert response.engines[0].status == "ok" and len(response.results) == 3
    # A small compressed body that inflates past the cap (a "zip bomb") is refused while inflating.
    bomb = gzip.compress(b"<!--" + b"x" * 5_000_000 + b"-->")
    engine.behaviour = page(bomb, headers={"Content-Encoding": "gzip"})
    s.settings.max_response_bytes = 1_000_000
    await s.cooldowns.store.clear(s.settings.upstream("bing"))
    response = await s.search("python release notes")
    await s.close()
    assert response.engines[0].status == "error" and "cap" in response.engines[0].detail


def wiki_json(titles: list[str]) -> str:
    import json

    return json.dumps({"batchcomplete": True, "query": {"searchinfo": {"totalhits": len(titles)}, "search": [
        {"ns": 0, "title": t, "pageid": i, "snippet": f"{t} python asyncio", "timestamp": "2020-01-01T00:00:00Z"}
        for i, t in enumerate(titles)]}})


async def test_site_operator_is_native_for_bing_and_a_hard_filter_for_wikipedia(standins):
    bing = await standins(page(bing_page([
        ("asyncio — Python docs", "https://docs.python.org/3/library/asyncio.html", "python asyncio"),
        ("asyncio tutorial elsewhere", "https://realpython.com/async-io-python/", "python asyncio tutorial"),
    ])))
    wiki = await standins(page(wiki_json(["Asyncio", "Python (programming language)"]),
                               content_type="application/json"))
    s = searcher({"bing": bing.url, "wikipedia": wiki.url})
    response = await s.search("python asyncio site:python.org")
    await s.close()
    assert response.recognised == ["site=python.org"]
    assert bing.queries()[0] == "python asyncio site:python.org"  # passed natively, once
    assert "site:" not in wiki.queries("srsearch")[0]  # stripped for an engine that would misread it
    assert [r.url for r in response.results] == ["https://docs.python.org/3/library/asyncio.html"]
    reports = {e.name: e for e in response.engines}
    assert reports["wikipedia"].status == "empty" and "site=python.org" in reports["wikipedia"].detail
    assert reports["bing"].kept == 1  # the filter excludes; it never just lowers a rank


async def test_time_operator_drops_old_and_unverifiable_rows_of_non_native_engines(standins):
    from datetime import datetime

    bing = await standins(page(bing_page([
        ("Python 3.14 released", "https://www.python.org/downloads/release/python-3140/",
         "3 days ago · python release news"),
        ("Python 2.7 released", "https://www.python.org/downloads/release/python-270/",
         "Jul 3, 2010 · python release news"),
    ])))
    wiki = await standins(page(wiki_json(["Python release history"]), content_type="application/json"))
    s = searcher({"bing": bing.url, "wikipedia": wiki.url})
    response = await s.search("python release news past week", now=datetime(2026, 11, 29, 12))
    await s.close()
    assert response.recognised == ["time=week"]
    assert dict(bing.requests[0].query)["filters"] == ['ex1:"ez2"']  # native time filter for Bing
    assert bing.queries()[0] == "python release news"  # "past week" stripped from the text
    assert [r.url for r in response.results] == ["https://www.python.org/downloads/release/python-3140/"]
    assert {e.name: e.status for e in response.engines}["wikipedia"] == "empty"  # a 2020 edit is not this week


async def test_chinese_time_operator(standins):
    engine = await standins(page(bing_page([("数据要素 政策 解读", "https://www.gov.cn/zhengce/x.html",
                                              "2 天前 · 数据要素 政策")])))
    s = searcher({"bing-cn": engine.url})
    response = await s.search("数据要素 政策 最近一周")
    await s.close()
    assert response.recognised == ["time=week"]
    assert engine.queries()[0] == "数据要素 政策"
    assert response.results and response.results[0].domain == "www.gov.cn"


async def test_partial_when_a_chosen_fallback_engine_fails(standins):
    engine = await standins(page("down", status=500))
    s = searcher({"duckduckgo-lite": engine.url})
    response = await s.search("python release notes")
    await s.close()
    assert response.engines[0].tier == "fallback" and response.engines[0].status == "error"
    assert response.partial is True


async def test_an_endpoint_for_searxng_serves_as_its_instance_url(standins):
    import json

    engine = await standins(page(json.dumps({"results": [
        {"title": "Python docs", "url": "https://docs.python.org/3/", "content": "python release notes"}]}),
        content_type="application/json"))
    s = searcher({"searxng": engine.url})
    response = await s.search("python release notes")
    await s.close()
    assert response.engines[0].status == "ok" and engine.requests[0].path == "/search"


def test_search_sync_keeps_cooldowns_between_calls(standins_sync):
    from plugin import Settings, search_sync

    url, requests = standins_sync
    settings = Settings(endpoints={"bing": url}, engines=["bing"])
    first = search_sync("python release notes", settings=settings)
    second = search_sync("python release notes", settings=settings)
    assert first.engines[0].status == "error" and second.engines[0].status == "cooldown"
    assert len(requests) == 1


STARTPAGE_RESULTS = ('<html><body><form id="search"><input name="query" value="python asyncio"></form>'
                     '<div class="w-gl"><div class="result"><a class="result-title result-link" '
                     'href="https://docs.python.org/3/library/asyncio.html"><h2>asyncio — Asynchronous I/O</h2></a>'
                     '<p class="description">python asyncio documentation</p></div></div></body></html>')


async def test_startpage_two_steps_and_a_missing_home_page(standins):
    from aiohttp import web

    async def routed(request, standin):
        if request.path == "/sp/search":
            return web.Response(text=STARTPAGE_RESULTS, content_type="text/html")
        if home["page"] is None:
            return web.Response(status=404, text="not here")
        return web.Response(text=home["page"], content_type="text/html")

    home = {"page": '<html><body><form id="search" action="/sp/search"><input type="hidden" name="sc" '
                    'value="TOKEN123"><input name="query"></form></body></html>'}
    engine = await standins(routed)
    s = searcher({"startpage": engine.url})
    response = await s.search("python asyncio")
    assert [r.path for r in engine.requests] == ["/", "/sp/search"]
    assert engine.requests[1].form["sc"] == ["TOKEN123"]
    assert response.results[0].url == "https://docs.python.org/3/library/asyncio.html"
    home["page"] = None  # a stand-in or mirror without a home page: search without the token
    response = await s.search("python asyncio docs")
    await s.close()
    assert [r.path for r in engine.requests[2:]] == ["/", "/sp/search"] and "sc" not in engine.requests[3].form
    assert response.engines[0].status == "ok"


async def test_the_query_region_leads_the_interleaving(standins):
    # Issue 14 mutant: the lead region always "global". Two relevant lists, one from a CJK engine and one
    # from a global engine: for a Chinese query the CJK engine's first row leads, for an English one the
    # global engine's.
    cjk_rows = [("东数西算 枢纽节点 布局", "https://cn-one.example.cn/hub", "东数西算 枢纽节点 布局 解读"),
                ("东数西算 枢纽节点 名单", "https://cn-two.example.cn/list", "东数西算 枢纽节点 名单")]
    global_rows = [("东数西算 枢纽节点 overview", "https://en-one.example.com/hub", "东数西算 枢纽节点 overview"),
                   ("东数西算 枢纽节点 analysis", "https://en-two.example.com/analysis", "东数西算 枢纽节点")]
    cn = await standins(page(bing_page(cjk_rows)))
    en = await standins(page(bing_page(global_rows)))
    s = searcher({"bing-cn": cn.url, "bing": en.url})
    chinese = await s.search("东数西算 枢纽节点")
    cn.behaviour = page(bing_page([(t.replace("东数西算 枢纽节点", "data hub nodes"), u, "data hub nodes plan")
                                   for t, u, _ in cjk_rows]))
    en.behaviour = page(bing_page([(t.replace("东数西算 枢纽节点", "data hub nodes"), u, "data hub nodes plan")
                                   for t, u, _ in global_rows]))
    english = await s.search("data hub nodes")
    await s.close()
    assert chinese.results[0].url == "https://cn-one.example.cn/hub"
    assert english.results[0].url == "https://en-one.example.com/hub"


async def test_the_module_level_search_passes_every_option_on_and_reads_nothing_unasked(standins):
    """`plugin.search` is what most callers use: each keyword must reach the engines as the Searcher's
    would, and `read` defaults to no page reads (a read is a request to somebody's site)."""
    import plugin

    bing = await standins(page(bing_page([("Rust async book", "https://async-book.example/", "rust async")])))
    settings = Settings(endpoints={"bing": bing.url}, engines=["bing"])
    response = await plugin.search("rust async", settings=settings, safesearch="strict", region="de-DE")
    response_default = await plugin.search("rust async", settings=settings, safesearch="off", region="de-DE")
    from plugin.pipeline.searcher import searcher_for
    await searcher_for(settings).close()
    asked = [seen.query for seen in bing.requests]
    assert [q.get("adlt") for q in asked] == [["strict"], ["off"]]
    assert all(r.content is None and r.read_error is None for r in response.results + response_default.results)


async def test_explain_shows_each_rows_votes_and_boosts_only_when_asked(standins):
    """issue 20: --explain / explain=True. The votes add up to the score with the boosts; a caller who did not
    ask gets no explanation (identical searches share one ranking, explained or not)."""
    bing = await standins(page(bing_page(PY_ROWS)))
    ddg = await standins(page(ddg_page(list(reversed(PY_ROWS)))))
    s = searcher({"bing": bing.url, "duckduckgo-html": ddg.url}, cache_ttl_s=0)
    explained = await s.search("python release notes", explain=True)
    plain = await s.search("python release notes")
    await s.close()
    assert [r.url for r in explained.results] == [r.url for r in plain.results]
    assert all(r.explain is None for r in plain.results)
    for row in explained.results:
        parts = row.explain
        assert set(parts.votes) == set(row.engines) == set(parts.trust)
        assert row.score == pytest.approx(sum(parts.votes.values()) + parts.authority + parts.coverage
                                          + parts.freshness, abs=1e-5)
        # Coverage scales the votes after authority, by at most coverage_boost (0.35) for the whole query.
        assert 0.0 <= parts.coverage <= 0.35 * (sum(parts.votes.values()) + parts.authority) + 1e-5
    top = explained.results[0]
    # The official site of the query (python.org) carries its authority share of the votes.
    official = next(r for r in explained.results if r.domain == "python.org")
    assert official.explain.authority == pytest.approx(0.4 * sum(official.explain.votes.values()), abs=1e-5)
    assert top.explain.votes and all(v > 0 for v in top.explain.votes.values())
    # Every row here holds the whole query ("python release notes"): each counts its votes 1.35 times.
    assert all(r.explain.coverage == pytest.approx(0.35 * (sum(r.explain.votes.values()) + r.explain.authority),
                                                   abs=1e-5) for r in explained.results)
    from plugin.surfaces.render import render_table

    assert f"coverage +{top.explain.coverage:.3f}" in render_table(explained)  # the --explain table says it too


async def test_the_cli_explains_rows_in_the_table_and_in_json(standins):
    import asyncio
    import json
    import os
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    bing = await standins(page(bing_page(PY_ROWS)))

    async def cli(*extra: str) -> str:
        proc = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "plugin.surfaces.cli", "search", "python release notes", "--engines", "bing",
            "--endpoint", f"bing={bing.url}", "--no-cache", *extra, stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE, cwd=root,
            env={**os.environ, "PYTHONPATH": str(root), "METASEARCH_STATE_BACKEND": "memory"})
        out, err = await proc.communicate()
        assert proc.returncode == 0, err.decode()
        return out.decode()

    table = await cli("--explain")
    assert "votes: bing 1.000 (#1, trust 1.00)" in table
    assert "votes:" not in await cli()
    rows = json.loads(await cli("--explain", "--json"))["results"]
    assert rows[0]["explain"]["votes"] == {"bing": 1.0} and rows[0]["explain"]["trust"] == {"bing": 1.0}


async def test_max_per_domain_reaches_the_answer(standins):
    """`max_per_domain` (diversify is unit-tested in test_ranking) is applied to what a search returns."""
    docs = [(f"Python release notes {i}", f"https://docs.python.org/3/whatsnew/3.{i}.html", "python release notes")
            for i in range(5)]
    others = [("Python release notes explained", "https://realpython.com/python-release-notes/",
               "python release notes"),
              ("Python release notes digest", "https://lwn.net/python-release-notes/", "python release notes")]
    engine = await standins(page(bing_page(docs + others)))
    s = searcher({"bing": engine.url}, max_per_domain=2)
    response = await s.search("python release notes", limit=4)
    await s.close()
    assert [row.domain for row in response.results] == ["python.org", "python.org", "realpython.com", "lwn.net"]
