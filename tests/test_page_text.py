"""A page's text without the network: HTML main text and its Markdown (plugin.reading.extract, .markdown),
an article body split over several containers joined (plugin.reading.split_body), what a body is sniffed as (plugin.reading.documents), slices (plugin.reading.reader.slice_text) and the
cookies of one read (plugin.reading.hops.ReadCookies)."""

from __future__ import annotations

import codecs

import pytest
from examples import scaled
from hypothesis import given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule, run_state_machine_as_test

from pages import ARTICLE_PARAGRAPHS, article_html
from plugin.infra.transport import _take_cookies
from plugin.reading.addresses import Target
from plugin.reading.documents import kind_of
from plugin.reading.extract import extract_html, parse_html, visible_text
from plugin.reading.hops import ReadCookies
from plugin.reading.markdown import render
from plugin.reading.reader import slice_text


def rendered(xml: str, *, markdown: bool = True) -> str:
    """trafilatura's tree vocabulary (`<body><code>…</code></body>`) rendered by our writer."""
    from lxml import etree

    return render(etree.fromstring(xml), markdown=markdown)


# ----- code blocks -----
def test_a_code_block_keeps_every_line_after_a_line_break_element():
    html = article_html(extra_body="<pre><code>first line<br>second line<br>third line</code></pre>")
    text = extract_html(html).content
    assert "```\nfirst line\nsecond line\nthird line\n```" in text
    plain = extract_html(html, markdown=False).content
    assert "first line\nsecond line\nthird line" in plain


def test_a_pre_that_is_no_code_keeps_its_lines():
    # trafilatura hands such a <pre> (a plain-text table, a poem, a terminal's output) back as a quote with
    # plain newlines, which running text collapsed onto one line ("> Name Age Alice 30 Bob 25")
    words = "The harbour council met on Tuesday to discuss the new sea wall. "
    html = article_html(extra_body=f"<p>{words * 2}</p><pre>Name    Age\nAlice   30\nBob     25</pre><p>{words}</p>")
    assert "> Name Age\n> Alice 30\n> Bob 25" in extract_html(html).content
    assert "Name Age\nAlice 30\nBob 25" in extract_html(html, markdown=False).content
    poem = article_html(extra_body="<pre>Roses are red,\n  violets are <b>blue</b>.</pre>")
    assert "> Roses are red,\n> violets are **blue**." in extract_html(poem).content
    code = article_html(extra_body="<pre><code>x = 1\ny = 2</code></pre>")
    assert "```\nx = 1\ny = 2\n```" in extract_html(code).content  # code stays code, nothing added
    assert "\u2063" not in extract_html(html).content + extract_html(code).content
    quote = article_html(extra_body="<blockquote>Line one\nline two</blockquote>")
    assert "> Line one line two" in extract_html(quote).content  # a quote's source newlines are no lines


def test_code_keeps_nested_markup_in_document_order():
    xml = '<body><code>a = <hi rend="#b">b<hi rend="#i">c</hi>d</hi>e<lb/>f</code></body>'
    assert rendered(xml) == "```\na = bcde\nf\n```"


def test_a_fence_is_longer_than_any_backtick_run_in_the_code():
    xml = "<body><code>print('x')<lb/>```python<lb/>inside<lb/>```</code></body>"
    assert rendered(xml) == "````\nprint('x')\n```python\ninside\n```\n````"
    xml = "<body><code>````md<lb/>```<lb/>````</code></body>"
    assert rendered(xml) == "`````\n````md\n```\n````\n`````"


def test_a_one_line_code_block_is_inline_code_its_fence_longer_than_its_backticks():
    assert rendered("<body><code>run `make`</code></body>") == "`` run `make` ``"  # CommonMark: spaced, as it ends in a backtick


def test_inline_code_that_starts_or_ends_with_a_backtick_is_spaced_inside_its_fence():
    # CommonMark reads ``run `make``` as no code span at all, and ```x``` as the span x, its backticks lost
    assert rendered("<body><p>see <code>run `make`</code> end</p></body>") == "see `` run `make` `` end"
    assert rendered("<body><p>see <code>`x`</code> end</p></body>") == "see `` `x` `` end"
    assert rendered("<body><p>see <code>a``b</code> end</p></body>") == "see ```a``b``` end"  # inside: no space


def test_running_text_that_reads_as_a_fence_or_a_heading_stays_text():
    # A paragraph "``` opens a fenced block" or a "~~~" scene break had opened a code block in our own
    # Markdown: every later paragraph became one code unit (one passage of thousands of characters).
    from plugin.reading.sentences import CODE, HEADING, segment

    xml = ("<body><p>``` opens a fenced block in Markdown.</p><p>~~~</p><p>She walked on.</p>"
           "<p>   # 1 pick of the week</p><p>#hashtags stay</p><p>Last one.</p></body>")
    text = rendered(xml)
    assert text == ("\\``` opens a fenced block in Markdown.\n\n\\~~~\n\nShe walked on.\n\n\\# 1 pick of the week"
                    "\n\n#hashtags stay\n\nLast one.")
    assert not any(u.kind in (CODE, HEADING) for u in segment(text).units)
    assert rendered(xml, markdown=False).startswith("``` opens")  # plain text has nothing to escape
    assert rendered("<body><code>```<lb/>x<lb/>```</code></body>") == "````\n```\nx\n```\n````"  # code: fenced


def test_a_list_nested_in_an_item_is_indented_by_the_item_s_marker():
    xml = ("<body><list rend='ol'><item>first<list rend='ol'><item>sub a</item><item>sub b</item></list></item>"
           "<item>second</item></list></body>")
    assert rendered(xml) == "1. first\n   1. sub a\n   2. sub b\n2. second"  # 3 spaces under "1. "
    items = "".join(f"<item>n{i}</item>" for i in range(9))
    xml = f"<body><list rend='ol'>{items}<item>ten<list rend='ul'><item>under ten</item></list></item></list></body>"
    assert rendered(xml).endswith("10. ten\n    - under ten")  # 4 under "10. "
    xml = "<body><list rend='ul'><item>a<list rend='ul'><item>b</item></list></item></list></body>"
    assert rendered(xml) == "- a\n  - b"


def test_a_code_block_in_a_list_item_keeps_its_lines_under_the_item():
    # flattened onto the item's line, "pip install foo" and "foo --init" ran together as one command
    xml = ("<body><list rend='ol'><item>Install it:<code>pip install foo<lb/>foo --init</code></item>"
           "<item>Run it.</item></list></body>")
    assert rendered(xml) == "1. Install it:\n   ```\n   pip install foo\n   foo --init\n   ```\n2. Run it."
    assert rendered(xml, markdown=False) == "- Install it:\n  pip install foo\n  foo --init\n- Run it."
    one_line = "<body><list rend='ul'><item>Run <code>make</code> now</item></list></body>"
    assert rendered(one_line) == "- Run `make` now"


def test_a_quote_or_pre_in_a_list_item_has_no_stray_marker_mid_line_and_keeps_its_lines_under_the_item():
    from plugin.reading.markdown import PRE_MARK

    one_line = (f"<body><list rend='ol'><item>Install it:<quote>{PRE_MARK}pip install widgets</quote></item>"
                "<item>Two.</item></list></body>")
    assert rendered(one_line) == "1. Install it: pip install widgets\n2. Two."  # was "Install it: > pip …"
    lines = (f"<body><list rend='ol'><item>Output:<quote>{PRE_MARK}line one\nline two</quote>after</item>"
             "<item>Two.</item></list></body>")
    assert rendered(lines) == "1. Output: after\n   > line one\n   > line two\n2. Two."
    assert rendered(lines, markdown=False) == "- Output: after\n  line one\n  line two\n- Two."
    said = "<body><list rend='ul'><item>He said:<quote><p>first para</p><p>second para</p></quote></item></list></body>"
    assert rendered(said) == "- He said:\n  > first para\n  >\n  > second para"
    short = "<body><list rend='ul'><item>He said:<quote>short words</quote>and left</item></list></body>"
    assert rendered(short) == "- He said: short words and left"
    code = "<body><list rend='ol'><item>Install:<code>a b<lb/>c d</code>then</item></list></body>"
    assert rendered(code) == "1. Install: then\n   ```\n   a b\n   c d\n   ```"  # was "Install:then"


@hypothesis_settings(max_examples=scaled(100), deadline=None)
@given(items=st.lists(st.tuples(st.sampled_from(["", "Step:"]), st.integers(1, 3), st.sampled_from(["", "then go"])),
                      min_size=1, max_size=3),
       ordered=st.booleans(), markdown=st.booleans())
def test_each_code_block_in_a_list_item_is_rendered_once_and_shown_once(items, ordered, markdown):
    """A one-line code block in an item was rendered twice (once to see it had no line break, once to show
    it): each is now rendered once, and each of its lines is shown exactly once."""
    from lxml import etree

    from plugin.reading import markdown as writer

    lines = [[f"run{n}x{k} now" for k in range(count)] for n, (_, count, _) in enumerate(items)]
    xml = f"<body><list rend='{'ol' if ordered else 'ul'}'>" + "".join(
        f"<item>{lead}<code>{'<lb/>'.join(code)}</code>{tail}</item>"
        for (lead, _, tail), code in zip(items, lines)) + "</list></body>"
    calls: list[object] = []
    original = writer._Writer.code

    def counted(self, element):
        calls.append(element)
        return original(self, element)

    writer._Writer.code = counted
    try:
        out = rendered(xml, markdown=markdown)
    finally:
        writer._Writer.code = original
    assert len(calls) == len(items)  # each code element rendered once
    for code in lines:
        for line in code:
            assert out.count(line) == 1
        if len(code) == 1 and markdown:
            assert f"`{code[0]}`" in out  # a one-liner stays inline code on its item's line


def test_a_page_nested_deeper_than_libxml2_s_default_is_read_whole_or_says_what_is_missing():
    # libxml2 parses HTML 256 levels deep unless told otherwise and drops the rest of the page without a
    # word: 400 paragraphs each in an unclosed <div> (or <font>, as old pages have them) kept 253.
    words = "The harbour council met on Tuesday to discuss the new sea wall and its funding. "

    def page(body: str) -> str:
        return f"<html><head><title>t</title></head><body><article>{body}</article></body></html>"

    for tag in ("div", "font"):
        found = extract_html(page("".join(f"<p><{tag}>{i} {words}" for i in range(400))))
        assert found.content.count("harbour") == 400 and found.warnings == [], tag
    nest = extract_html(page(f"<p>BEFORE {words * 3}</p>" + "<div>" * 300 + "x" + "</div>" * 300
                             + f"<p>AFTER {words * 3}</p>"))
    assert "BEFORE" in nest.content and "AFTER" in nest.content
    # deeper than libxml2 reads even when told (2,048 levels): what is missing is said
    deepest = extract_html(page("".join(f"<div><b>{i} {words}" for i in range(1100))))
    assert "harbour" in deepest.content
    assert ("the page nests its markup deeper than 2048 elements, as far as it is read: the text beyond that "
            "depth is missing") in deepest.warnings


def test_a_page_without_head_whose_start_does_not_say_html_is_still_read():
    # trafilatura's loader gives nothing for these (no <head>, no "html" in the first 50 characters), and
    # the page was not_extractable: a page opening with a long comment, a bare <body>, text served as HTML.
    words = "The harbour council met on Tuesday to discuss the new sea wall. " * 5
    for html in (f"<!-- generated by a static site generator, version 1.2.3 -->\n<html><body><p>{words}</p>"
                 "</body></html>", f"<body><p>{words}</p></body>", words,
                 f'<?xml version="1.0" encoding="utf-8"?><body><p>{words}</p></body>'):
        found = extract_html(html)
        assert found.method == "main" and found.content == words.strip(), html[:40]
    assert extract_html("").method == "none" and extract_html("  \n ").method == "none"


# ----- tables -----
def test_a_pipe_in_a_table_cell_is_escaped_in_markdown_only():
    xml = ('<body><table><row><cell role="head">Operator</cell><cell role="head">Means</cell></row>'
           '<row><cell>a | b</cell><cell>either</cell></row></table></body>')
    assert rendered(xml) == "| Operator | Means |\n| --- | --- |\n| a \\| b | either |"
    assert rendered(xml, markdown=False) == "Operator | Means\na | b | either"


# ----- the visible-text fallback -----
def test_a_hover_card_in_a_paragraph_is_left_out_and_the_name_it_hangs_on_kept():
    # The Hill: a name in running text carries a card (photo, the name again, the person's latest headlines)
    # that the page's CSS shows only under the pointer; it was read into the sentence ("Rep. Ilhan OmarIlhan
    # OmarHillicon Valley: Progressives oppose …").
    card = ('<span class="rollover-people"><a class="rollover-people-link" href="/people/ilhan-omar">Ilhan Omar</a>'
            '<span class="rollover-people-block"><span class="rollover-block"><span><img src="/omar.jpg" alt="">'
            '<a class="name" href="/people/ilhan-omar">Ilhan Omar</a><a class="people-articles" href="/a">Hillicon '
            'Valley: Progressives oppose funding bill</a> <a class="people-articles" href="/b">Omar asks court for '
            'compassion</a></span></span></span></span>')
    tip = '<span class="tooltip"><a href="/glossary#levy">levy</a></span>'  # a lone link: what the text says
    story = " ".join(f"Sentence {k} of the story goes on about the threat and the court." for k in range(12))
    html = (f"<html><head><title>Threat</title></head><body><article><h1>Threat</h1><p>A man threatened to kill "
            f"Rep. {card} (D-Minn.), the office said, over a {tip} on boats.</p><p>{story}</p></article></body></html>")
    text = extract_html(html, url="https://example.org/story").content
    assert "threatened to kill Rep. Ilhan Omar (D-Minn.), the office said, over a levy on boats." in text
    assert "Hillicon" not in text and "compassion" not in text


def test_visible_text_leaves_out_what_a_person_does_not_see():
    html = ("<html><body><p>Shown to readers.</p><div aria-hidden='true'>Icon label for screen readers</div>"
            "<div aria-hidden='false'>Also shown.</div><p hidden>Hidden by attribute.</p>"
            "<p style='display: none'>Hidden by style.</p><script>var tracking = 1;</script></body></html>")
    assert visible_text(parse_html(html)) == "Shown to readers.\nAlso shown."


def test_short_main_text_is_kept_when_the_visible_text_is_not_much_longer():
    # Main text under fetch_fallback_min_chars, the whole page hardly longer: the main text is kept, without
    # the "visible text" warning (a short note is a short note, not a failed extraction).
    note = "Maintenance tonight from ten until midnight; the service stays read-only meanwhile."
    html = f"<html><head><title>Status</title></head><body><main><article><p>{note}</p></article></main>" \
           f"<footer><p>Status page</p></footer></body></html>"
    extracted = extract_html(html, fallback_min_chars=200)
    assert note in extracted.content and extracted.method == "main" and extracted.warnings == []
    assert "Status page" not in extracted.content


def test_long_main_text_is_kept_whatever_the_page_around_it():
    html = article_html(extra_body="")
    extracted = extract_html(html, fallback_min_chars=200)
    assert extracted.method == "main" and ARTICLE_PARAGRAPHS[0] in extracted.content
    assert "Ten tips for faster builds" not in extracted.content


# ----- an article body split over several containers -----
def _split_article(containers: int = 3, *, classes: tuple[str, ...] = ()) -> str:
    """A page whose body comes in `containers` containers of one class with an ad row and a rail between
    them (as Wired's pages): each holds three paragraphs, `Paragraph k.j ...`."""
    def paragraph(k: int, j: int) -> str:
        return (f"<p>Paragraph {k}.{j} of the story says that the harbour town rebuilt its sea wall in stone "
                f"after the storm of {1900 + k * 10 + j}, and the council paid for it with a levy on every boat.</p>")

    parts = []
    for k in range(containers):
        body_class = classes[k] if k < len(classes) else "body body__container article__body"
        parts.append(f'<div class="grid grid-layout--adrail"><div class="{body_class}">'
                     + "".join(paragraph(k, j) for j in range(3))
                     + '</div><div class="grid-layout__aside"><div class="ad ad--rail"></div>'
                       '<div class="recirc-most-popular">Most popular</div></div></div>'
                       '<div class="row full-bleed-ad"><div class="ad ad--mid-content">'
                       '<span class="ad-label">Advertisement</span></div></div>')
    return ("<html><head><title>Sea wall</title></head><body><header><nav><a href='/'>Home</a></nav></header>"
            "<main><article><h1>The sea wall</h1>" + "".join(parts) + "</article></main><footer>Footer</footer>"
            "</body></html>")


def _kept(text: str, containers: int = 3) -> list[str]:
    return [f"{k}.{j}" for k in range(containers) for j in range(3) if f"Paragraph {k}.{j} " in text]


def test_an_article_body_split_by_ad_rows_is_extracted_whole_in_order():
    text = extract_html(_split_article(), url="https://example.org/story").content
    assert _kept(text) == [f"{k}.{j}" for k in range(3) for j in range(3)]
    assert [text.index(f"Paragraph {k}.0 ") for k in range(3)] == sorted(text.index(f"Paragraph {k}.0 ")
                                                                         for k in range(3))
    assert "Advertisement" not in text and "Most popular" not in text


def test_containers_of_another_class_are_not_joined_to_the_body():
    from plugin.reading.split_body import merged_body_tree
    from trafilatura import bare_extraction

    # the second and third blocks are teasers of other stories, not the article's body: left as they were
    html = _split_article(classes=("body body__container article__body", "teaser", "teaser"))
    tree = parse_html(html)
    assert merged_body_tree(tree, bare_extraction(tree, url="https://example.org/story", include_comments=False).body) is None
    assert _kept(extract_html(html, url="https://example.org/story").content) == ["0.0", "0.1", "0.2"]
    # one container: nothing to join; more than fifty of one kind: a list (comments, teasers), not a body
    for count, joined in ((1, False), (3, True), (50, True), (51, False)):
        tree = parse_html(_split_article(count))
        first_container = tree.xpath('//div[@class="body body__container article__body"]')[0]  # as if extracted
        assert (merged_body_tree(tree, first_container) is not None) is joined, count


def test_a_joined_body_is_kept_only_when_it_holds_the_first_and_adds_to_it():
    from plugin.reading.extract import _adds_to

    first = " ".join(f"Sentence {i} of the first extraction says something long enough to count." for i in range(20))
    more = " ".join(f"Sentence {i} of the later containers adds to the story." for i in range(10))
    assert _adds_to(first, first + " " + more)
    assert not _adds_to(first, first + " a few words")  # not a tenth more
    assert not _adds_to(first, more * 3)  # longer, but without what the first extraction had
    assert _adds_to("a short first text", "a short first text and a longer second one")  # (under 60 characters)
    assert not _adds_to("a short first text", "a different and much longer second text")


def test_a_failing_split_body_check_leaves_the_first_extraction(monkeypatch):
    from plugin.reading import split_body

    def broken(tree, extracted):
        raise ValueError("an odd page")

    monkeypatch.setattr(split_body, "merged_body_tree", broken)
    assert _kept(extract_html(_split_article(), url="https://example.org/story").content) == ["0.0", "0.1", "0.2"]


# ----- sniffing a body without a useful content type -----
@pytest.mark.parametrize("bom, encoding", [(codecs.BOM_UTF8, "utf-8"), (codecs.BOM_UTF16_LE, "utf-16-le"),
                                           (codecs.BOM_UTF16_BE, "utf-16-be")])
@pytest.mark.parametrize("media", ["", "application/octet-stream"])
def test_html_with_a_byte_order_mark_is_sniffed_as_html(bom, encoding, media):
    body = bom + "<!DOCTYPE html><html><body><p>Bonjour</p></body></html>".encode(encoding)
    assert kind_of(media, body) == "html"
    assert kind_of(media, bom + "  \n<html lang=fr><p>x</p></html>".encode(encoding)) == "html"
    assert kind_of(media, bom + b"PK\x03\x04 not html") is None


# ----- slices -----
def test_a_slice_is_cut_in_its_last_fifth_not_at_an_earlier_paragraph():
    # A paragraph break early on, then words: the cut is the last space before max_chars, not the break.
    text = "Short intro.\n\n" + "word " * 400
    piece, next_offset = slice_text(text, 0, 1000)
    assert 800 <= len(piece) <= 1000 and piece.endswith(" ") and next_offset == len(piece)
    # The same from an offset: the floor is counted from where the slice starts, so a paragraph break
    # before offset + 4/5 of max_chars is not where it ends.
    text = "w" * 1500 + "\n\n" + "word " * 200
    piece, next_offset = slice_text(text, 1000, 1000)
    assert 800 <= len(piece) <= 1000 and piece.endswith(" ") and next_offset == 1000 + len(piece)


def test_a_slice_prefers_a_paragraph_break_then_a_line_break_in_its_last_fifth():
    text = "a" * 850 + "\n" + "b" * 50 + "\n\n" + "c" * 30 + " " + "d" * 500
    assert slice_text(text, 0, 1000)[1] == 903  # after the paragraph break, not after the later space
    text = "a" * 850 + " " + "b" * 50 + "\n" + "c" * 500
    assert slice_text(text, 0, 1000)[1] == 902  # after the line break, not after the space
    # The last fifth starts at offset + 800 of 1,000: a break just before it is not used, one at it is.
    assert slice_text("a" * 798 + "\n\n" + "b" * 500, 0, 1000)[1] == 1000
    assert slice_text("a" * 799 + " " + "b" * 500, 0, 1000)[1] == 1000
    assert slice_text("a" * 800 + " " + "b" * 500, 0, 1000)[1] == 801
    text = "x" * 2000  # nowhere to cut: the slice is max_chars long
    assert slice_text(text, 0, 1000) == ("x" * 1000, 1000)


# ----- the cookies of one read -----
def target(url: str) -> Target:
    scheme, rest = url.split("://", 1)
    host = rest.split("/", 1)[0]
    return Target(url=url, scheme=scheme, host=host, port=443 if scheme == "https" else 80)


def test_a_cookie_set_over_https_is_not_sent_over_plain_http():
    cookies = ReadCookies()
    secure, plain = target("https://news.example/a"), target("http://news.example/b")
    sent = cookies.for_hop(secure)
    cookies.after_hop(secure, sent, {**sent, "session": "s1"})
    assert cookies.for_hop(secure) == {"session": "s1"}
    assert cookies.for_hop(plain) == {}
    # A cookie set over plain http goes both ways.
    sent = cookies.for_hop(plain)
    cookies.after_hop(plain, sent, {**sent, "lang": "en"})
    assert cookies.for_hop(plain) == {"lang": "en"}
    assert cookies.for_hop(secure) == {"session": "s1", "lang": "en"}
    assert cookies.for_hop(target("https://other.example/")) == {}


# ----- the cookies of one read, against a plain model -----
COOKIE_HOSTS = ("news.example", "cdn.example", "news.example.org")
COOKIE_NAMES = ("session", "lang", "consent")


class ReadCookiesMachine(RuleBasedStateMachine):
    """A read's hops across hosts and schemes, each response setting and deleting cookies (Set-Cookie
    headers, parsed by the transport as a real exchange's are). The model: per host, each cookie's value
    and whether it was set over https. A hop is sent exactly its host's cookies (an https-set one only over
    https); a deletion takes away only what the hop was sent."""

    def __init__(self) -> None:
        super().__init__()
        self.cookies = ReadCookies()
        self.model: dict[str, dict[str, tuple[str, bool]]] = {host: {} for host in COOKIE_HOSTS}

    def expected(self, host: str, scheme: str) -> dict[str, str]:
        return {name: value for name, (value, secure) in self.model[host].items() if scheme == "https" or not secure}

    @rule(host=st.sampled_from(COOKIE_HOSTS), scheme=st.sampled_from(["http", "https"]),
          sets=st.dictionaries(st.sampled_from(COOKIE_NAMES), st.sampled_from(["1", "2", "x"]), max_size=2),
          deletes=st.sets(st.sampled_from(COOKIE_NAMES), max_size=2))
    def hop(self, host, scheme, sets, deletes):
        deletes -= sets.keys()
        hop = target(f"{scheme}://{host}/page")
        sent = self.cookies.for_hop(hop)
        assert sent == self.expected(host, scheme)
        jar = dict(sent)
        _take_cookies(jar, [f"{name}={value}; Path=/; HttpOnly" for name, value in sets.items()]
                      + [f"{name}=; Max-Age=0; Path=/" for name in deletes])
        self.cookies.after_hop(hop, sent, jar)
        for name in deletes & sent.keys():
            self.model[host].pop(name)
        for name, value in sets.items():
            if sent.get(name) != value:
                self.model[host][name] = (value, scheme == "https")

    @invariant()
    def every_host_and_scheme_is_sent_its_own(self):
        for host in COOKIE_HOSTS:
            for scheme in ("http", "https"):
                assert self.cookies.for_hop(target(f"{scheme}://{host}/other")) == self.expected(host, scheme)


def test_a_reads_cookies_answer_as_the_model():
    run_state_machine_as_test(ReadCookiesMachine, settings=hypothesis_settings(
        max_examples=scaled(100), stateful_step_count=30, deadline=None))
