"""Relevance gate and fusion, on rows built in the test."""

from __future__ import annotations

from datetime import date, datetime

from engines.base import Row
from plugin.pipeline.fusion import EngineList, freshness, fuse, interleave
from plugin.pipeline.relevance import build_gate, core_words
from plugin.settings import Settings

NOW = datetime(2026, 11, 29)


def rows(*urls: str, title: str = "python notes") -> list[Row]:
    return [Row(title=title, url=u, snippet="", position=i) for i, u in enumerate(urls, start=1)]


def test_weighted_round_robin_gives_weight_two_two_slots_a_round():
    a = EngineList("a", 2.0, "global", "ia", rows(*[f"https://a{i}.org/" for i in range(4)]))
    b = EngineList("b", 1.0, "global", "ib", rows(*[f"https://b{i}.org/" for i in range(4)]))
    order = [(lst.engine, row.position) for lst, row in interleave([b, a], "global", 0.5)]
    assert order[:6] == [("a", 1), ("a", 2), ("b", 1), ("a", 3), ("a", 4), ("b", 2)]


def test_lead_region_goes_first_and_other_region_still_contributes():
    cn = EngineList("bing-cn", 1.0, "cjk", "bing", rows("https://cn1.cn/", "https://cn2.cn/"))
    web = EngineList("bing", 1.0, "global", "bing2", rows("https://g1.org/", "https://g2.org/"))
    cjk_order = [row.url for _, row in interleave([web, cn], "cjk", 0.5)]
    assert cjk_order[0] == "https://cn1.cn/" and set(cjk_order) == {"https://cn1.cn/", "https://cn2.cn/",
                                                                     "https://g1.org/", "https://g2.org/"}
    assert [row.url for _, row in interleave([web, cn], "global", 0.5)][0] == "https://g1.org/"


def test_rrf_merges_votes_and_ties_break_deterministically():
    settings = Settings(authority_domains=[], authority_suffixes=[])
    a = EngineList("a", 1.0, "global", "ia", rows("https://x.org/1", "https://shared.org/"))
    b = EngineList("b", 1.0, "global", "ib", rows("https://y.org/1", "https://shared.org/"))
    fused = fuse([a, b], settings, lead_region="global", now=NOW)
    assert fused[0].url == "https://shared.org/" and fused[0].engines == ["a", "b"]
    assert fused[0].score == 1 / 63 + 1 / 64
    again = fuse([a, b], settings, lead_region="global", now=NOW)
    assert [f.url for f in fused] == [f.url for f in again]


def test_same_index_votes_can_be_discounted():
    a = EngineList("bing", 1.0, "global", "bing", rows("https://shared.org/"))
    b = EngineList("ddg", 1.0, "global", "bing", rows("https://shared.org/"))
    full = fuse([a, b], Settings(same_index_discount=1.0, authority_domains=[], authority_suffixes=[]),
                lead_region="global", now=NOW)[0].score
    half = fuse([a, b], Settings(same_index_discount=0.5, authority_domains=[], authority_suffixes=[]),
                lead_region="global", now=NOW)[0].score
    assert half == 1 / 61 + 0.5 / 62 and full == 1 / 61 + 1 / 62


def test_authority_and_freshness_boosts():
    settings = Settings()
    fresh = Row("new", "https://blog.example.com/new", "", 2, date(2026, 11, 28))
    docs = Row("docs", "https://docs.python.org/3/", "", 3)
    plain = Row("plain", "https://plain.example.com/", "", 1)
    fused = fuse([EngineList("a", 1.0, "global", "ia", [plain, fresh, docs])], settings, lead_region="global", now=NOW)
    assert [f.url for f in fused] == ["https://docs.python.org/3/", "https://blog.example.com/new",
                                      "https://plain.example.com/"]
    assert freshness(date(2026, 11, 29), NOW, 30) == 1.0
    assert freshness(date(2026, 10, 30), NOW, 30) == 0.0
    assert abs(freshness(date(2026, 11, 14), NOW, 30) - 0.5) < 1e-9
    assert freshness(None, NOW, 30) == 0.0 and freshness(date(2027, 6, 1), NOW, 30) == 0.0


def test_cjk_gate_units():
    gate = build_gate("东数西算 八个国家枢纽节点 定位")
    assert gate.kind == "cjk" and gate.required == 2
    assert not gate.keeps("定位_百度百科", "定位，汉语词语", "https://baike.baidu.com/item/定位")
    assert gate.keeps("国家枢纽节点", "", "https://x.cn/")
    mixed = build_gate("如何配置 postgres 逻辑复制")
    assert mixed.keeps("PostgreSQL Documentation", "", "https://www.postgresql.org/")
    assert not mixed.keeps("如何（汉语词语）_百度百科", "", "https://baike.baidu.com/item/如何")
    single = build_gate("日本")
    assert single.required == 1 and single.keeps("日本", "", "https://x.jp/")


def test_latin_gate_folds_case_and_diacritics_and_ignores_stop_words():
    gate = build_gate("The Tình hình thời tiết")
    assert gate.words == ("tinh", "hinh", "thoi", "tiet") and gate.required == 2
    assert gate.keeps("THỜI TIẾT hôm nay", "", "https://x.vn/")
    assert not gate.keeps("Thơ tình", "", "https://x.vn/")
    assert build_gate("the of and").kind == "none"


def test_core_words_drop_particles_and_keep_content():
    assert core_words("请问如何在集群中配置滚动更新策略呢") == "在集群中配置滚动更新策略"
    assert core_words("如何配置 postgres 逻辑复制") == "配置 postgres 逻辑复制"
    assert core_words("中国的能源政策有哪些最新变化") == "中国 能源政策 最新变化"


def test_diversify_moves_a_domains_extra_rows_behind_the_others():
    from plugin.pipeline.fusion import Fused, diversify

    def f(url: str, domain: str) -> Fused:
        return Fused(title=url, url=url, snippet="", domain=domain, date=None, score=0.0)

    ranked = [f("a1", "a.org"), f("a2", "a.org"), f("a3", "a.org"), f("b1", "b.org"), f("a4", "a.org")]
    assert [x.url for x in diversify(ranked, 2)] == ["a1", "a2", "b1", "a3", "a4"]
    assert [x.url for x in diversify(ranked, None)] == ["a1", "a2", "a3", "b1", "a4"]
