"""Pages that only a browser can show (issue 27): rendered by the installed Chromium, safely.

Every page is served by a loopback stand-in on 127.0.0.1 (the allowed block, 127.0.0.1/32); whatever a
rendered page's script asks of 127.0.0.2 (by fetch, image, iframe, redirect, WebSocket, beacon, a name
that resolves there, a move of the whole page) is watched by an `Outsider` listener that must see no
connection. Most tests share one reader (one browser) on a module-wide event loop, as a long-lived
process would; those about the browser's own life (crash, hang, closing, the CLI) start their own.
Tests that need Chromium skip, saying why, only where none can be found (.ci/services installs it).
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import signal
import sys
import tempfile
from pathlib import Path

import pytest
import pytest_asyncio
from aiohttp import web

from pages import Outsider, StandInDNS, article_html, paths, routes
from engines.browser import CHROME
from plugin.reading.chromium import find_chromium
from plugin.reading.reader import Reader
from plugin.settings import Settings
from standins import StandIn, page

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM, WHY_NOT = find_chromium(os.environ.get("METASEARCH_CHROMIUM") or None)
needs_chromium = pytest.mark.skipif(CHROMIUM is None, reason=f"no Chromium to render with: {WHY_NOT}")
module_loop = pytest.mark.asyncio(loop_scope="module")

TITLE = "Keepers of the northern lights"
SENTENCE = "Lighthouse keepers on the northern coast logged every passing ship in a bound ledger."
PARAGRAPHS = [
    SENTENCE + " The ledgers survive in the county archive, a century of weather and hulls in faded ink.",
    "Each entry names the vessel, its heading and the hour, and often a remark on the sea or the sky. "
    "Keepers wrote in turns through the night, so the hand changes every four hours.",
    "Historians use the ledgers to date wrecks and storms that the newspapers of the time never mentioned, "
    "and to trace the slow change from sail to steam along the coast.",
]
JSON_SENTENCE = "The tide tables were printed each winter by the harbour board and sold for a penny."
JSON_PARAGRAPHS = [
    JSON_SENTENCE + " Fishermen kept them in their coats until the paper fell apart in the spring rain.",
    "The board's own copies, bound by year, are the only complete run that remains of the printed tables, "
    "and they show the harbour silting up decade after decade.",
]
BUILD = """
function build(data) {
  const root = document.getElementById('root');
  const article = document.createElement('article');
  const heading = document.createElement('h1'); heading.textContent = data.title; article.appendChild(heading);
  for (const text of data.paragraphs) { const p = document.createElement('p'); p.textContent = text; article.appendChild(p); }
  root.appendChild(article);
}
"""


def shell(script: str, title: str = "App") -> str:
    """An app shell: an empty mount element, a noscript asking for JavaScript, the page's script."""
    return (f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>{title}</title></head><body>"
            "<div id='root'></div><noscript>You need to enable JavaScript to run this app.</noscript>"
            f"<script>{BUILD}\n{script}</script></body></html>")


def built(paragraphs: list[str] = PARAGRAPHS, title: str = TITLE) -> str:
    return f"build({json.dumps({'title': title, 'paragraphs': paragraphs})});"


def outside_script(outsider: str, port: int, site_port: int) -> str:
    """Everything a script can do to reach 127.0.0.2 (and a name that resolves there)."""
    return f"""
fetch('{outsider}/by-fetch').catch(() => {{}});
new Image().src = '{outsider}/by-image.gif';
const frame = document.createElement('iframe'); frame.src = '{outsider}/by-iframe'; document.body.appendChild(frame);
const hop = document.createElement('iframe'); hop.src = '/go-out'; document.body.appendChild(hop);
fetch('/go-out').catch(() => {{}});
fetch('http://intranet.example:{port}/by-name').catch(() => {{}});
fetch('http://localhost:{site_port}/by-localhost').catch(() => {{}});
try {{ new WebSocket('ws://127.0.0.2:{port}/by-websocket'); }} catch (e) {{}}
try {{ navigator.sendBeacon('{outsider}/by-beacon', 'x'); }} catch (e) {{}}
const link = document.createElement('link'); link.rel = 'stylesheet'; link.href = '{outsider}/by-style.css';
document.head.appendChild(link);
fetch('/article.json').then(r => r.json()).then(build).then(() => {{
  setTimeout(() => {{ location.href = '{outsider}/by-moving-the-page'; }}, 50);
}});
"""


POPUPS = """
window.open('/popup-opened');
const a = document.createElement('a'); a.href = '/popup-clicked'; a.target = '_blank'; document.body.appendChild(a); a.click();
alert('hello'); confirm('sure?'); prompt('name?');
const d = document.createElement('a'); d.href = '/file.bin'; d.download = 'file.bin'; document.body.appendChild(d); d.click();
setTimeout(() => { location.href = '/file.bin'; }, 10);
""" + built()

STORAGE = """
const found = '[' + document.cookie + '|' + (localStorage.getItem('seen') || '') + '|' + (sessionStorage.getItem('seen') || '') + ']';
document.cookie = 'seen=yes; max-age=3600'; localStorage.setItem('seen', 'yes'); sessionStorage.setItem('seen', 'yes');
build({title: 'Storage', paragraphs: ['What this read found left by an earlier one: ' + found + '. ' + %s]});
""" % json.dumps(" ".join(PARAGRAPHS))

LOCAL_FILES = """
let leaked = '';
fetch('file:///etc/hostname').then(r => r.text()).then(t => { leaked += t; }).catch(() => {});
const f = document.createElement('iframe'); f.src = 'file:///etc/passwd'; document.body.appendChild(f);
const i = document.createElement('iframe'); i.src = 'chrome://version'; document.body.appendChild(i);
setTimeout(() => { build({title: 'Files', paragraphs: ['Leaked: [' + leaked + ']. ' + %s]}); }, 200);
""" % json.dumps(" ".join(PARAGRAPHS))

MOVES = built() + "\nsetTimeout(() => { location.href = '/private/secret'; }, 20);"
NEVER_QUIET = built() + "\nsetInterval(() => { fetch('/tick?' + Math.random()).catch(() => {}); }, 40);"
NEVER_LOADS = built() + "\nconst img = document.createElement('img'); img.src = '/hang'; document.body.appendChild(img);"


COMPONENTS = """
class ArticleBody extends HTMLElement {
  constructor() {
    super();
    const root = this.attachShadow({mode: 'open'});
    root.innerHTML = '<style>p { margin: 0 }</style><h1><slot name="title"></slot></h1>' +
      %s.map(text => '<p>' + text + '</p>').join('') + '<p><slot></slot></p>';
  }
}
customElements.define('article-body', ArticleBody);
document.getElementById('root').innerHTML =
  '<article-body><span slot="title">%s</span>Written by the keepers themselves.</article-body>';
""" % (json.dumps(PARAGRAPHS), TITLE)

# The same component with a closed root (no script of the page can read it); the page's script then says
# what it sees of it: no shadowRoot on the host, attachShadow still native code.
CLOSED_COMPONENTS = COMPONENTS.replace("mode: 'open'", "mode: 'closed'").replace("article-body", "sealed-body") + """
const host = document.querySelector('sealed-body');
const seen = document.createElement('p');
seen.textContent = 'Seen by the page: shadowRoot ' + String(host.shadowRoot) + ', attachShadow native ' +
  String(Function.prototype.toString.call(Element.prototype.attachShadow).includes('[native code]')) + '.';
document.body.appendChild(seen);
"""

WEBSOCKET = """
const socket = new WebSocket('ws://' + location.host + '/ws');
socket.onmessage = (event) => { build(JSON.parse(event.data)); socket.close(); };
"""


async def websocket(request: web.Request, standin: StandIn) -> web.StreamResponse:
    socket = web.WebSocketResponse()
    await socket.prepare(request)
    await socket.send_str(json.dumps({"title": "Tide tables", "paragraphs": JSON_PARAGRAPHS}))
    async for _ in socket:
        pass
    return socket


async def bot_wall(request: web.Request, standin: StandIn) -> web.StreamResponse:
    """The shell to our plain reads, a 403 challenge page to the rendering browser (a wall that lets in
    only the Chrome it has seen before: the browser transport's, on Windows; the rendering browser says
    Chrome of its own version on this system)."""
    if request.headers.get("User-Agent") != CHROME.user_agent:
        return web.Response(status=403, text="<html><body><h1>Checking your browser</h1></body></html>",
                            content_type="text/html")
    return web.Response(text=shell(built()), content_type="text/html")


async def who(request: web.Request, standin: StandIn) -> web.StreamResponse:
    """A shell whose script writes what the request said and what the page's own script sees."""
    sent = json.dumps(f"Sent as [{request.headers.get('User-Agent', '')}] with hints "
                      f"[{request.headers.get('sec-ch-ua', '')}] on [{request.headers.get('sec-ch-ua-platform', '')}].")
    script = ("build({title: 'Who', paragraphs: [%s, 'The script sees [' + navigator.userAgent + '] and it is "
              "a page long enough to be read as an article by the extraction that follows it.']});" % sent)
    return web.Response(text=shell(script), content_type="text/html")


async def slow_for_the_browser(request: web.Request, standin: StandIn) -> web.StreamResponse:
    """A shell sent at once to our plain reads and two seconds late to the rendering browser."""
    if request.headers.get("User-Agent") != CHROME.user_agent:
        await asyncio.sleep(2.0)
    return web.Response(text=shell(built()), content_type="text/html")


async def hang(request: web.Request, standin: StandIn) -> web.StreamResponse:
    await asyncio.sleep(120)
    return web.Response(text="late")


def table(outsider: Outsider, site_port: int) -> dict:
    out = outsider.url
    download = page(b"\x00binary" * 100, content_type="application/octet-stream",
                    headers={"Content-Disposition": "attachment; filename=file.bin"})
    return {
        "/robots.txt": page("User-agent: *\nDisallow: /private/\n", content_type="text/plain"),
        "/post": page(article_html()),
        "/built": page(shell(built())),
        "/built-unlabelled": page(shell(built()), content_type="application/octet-stream"),
        "/spa": page(shell("fetch('/article.json').then(r => r.json()).then(build);")),
        "/article.json": page(json.dumps({"title": "Tide tables", "paragraphs": JSON_PARAGRAPHS}),
                              content_type="application/json"),
        "/outside": page(shell(outside_script(out, outsider.port, site_port))),
        "/go-out": lambda request, standin: _redirect(out + "/by-redirect"),
        "/popups": page(shell(POPUPS)),
        "/popup-opened": page(article_html()), "/popup-clicked": page(article_html()),
        "/file.bin": download,
        "/storage": page(shell(STORAGE)),
        "/files": page(shell(LOCAL_FILES)),
        "/moves": page(shell(MOVES)),
        "/private/secret": page(article_html(title="Secret")),
        "/never-quiet": page(shell(NEVER_QUIET)), "/tick": page("{}", content_type="application/json"),
        "/never-loads": page(shell(NEVER_LOADS)), "/hang": hang,
        "/ws-shell": page(shell(WEBSOCKET)), "/ws": websocket,
        "/bot-wall": bot_wall,
        "/who": who,
        "/components": page(shell(COMPONENTS)),
        "/closed-components": page(shell(CLOSED_COMPONENTS)),
        "/slow-render": slow_for_the_browser,
        # a hash-routed app: what it shows depends on the fragment, which only the browser has
        "/hash-app": page(shell(f"if (location.hash === '#tides') {{ {built()} }} "
                                "else { build({title: 'Home', paragraphs: ['Pick a section.']}); }")),
    }


async def _redirect(location: str) -> web.StreamResponse:
    return web.Response(status=302, headers={"Location": location})


def settings(**overrides) -> Settings:
    base = dict(allow_private_hosts="127.0.0.1/32", state_backend="memory", fetch_host_interval_ms=0,
                fetch_cache_ttl_s=0, fetch_timeout_ms=60000, render_timeout_ms=30000, render_keep_s=600)
    base.update(overrides)
    return Settings(**base)


class World:
    """The pages, the listener outside the allowed block, and the shared reader (one browser)."""

    def __init__(self, site: StandIn, outsider: Outsider, reader: Reader, dns: StandInDNS):
        self.site, self.outsider, self.reader, self.dns = site, outsider, reader, dns

    def url(self, path: str) -> str:
        return self.site.url + path


@pytest_asyncio.fixture(loop_scope="module", scope="module")
async def world():
    if CHROMIUM is None:
        pytest.skip(f"no Chromium to render with: {WHY_NOT}")
    async with Outsider() as outsider:
        holder: dict = {}
        site = await StandIn(lambda request, standin: holder["routes"](request, standin)).start()
        holder["routes"] = routes(table(outsider, int(site.url.rsplit(":", 1)[1])))
        dns = StandInDNS({"intranet.example": ["127.0.0.2"]})
        reader = Reader(settings(), resolver=dns)
        try:
            yield World(site, outsider, reader, dns)
        finally:
            await reader.close()
            await site.stop()


# ----- shells are told apart, whatever the render setting -----
@needs_chromium
@module_loop
async def test_a_shell_built_by_its_script_comes_back_rendered(world):
    response = await world.reader.fetch(world.url("/built"))
    assert response.rendered is True and response.may_require_js is True
    assert SENTENCE in response.content and response.title == TITLE  # the h1 the script made
    assert response.content.startswith(f"# {TITLE}")
    assert any("built by scripts" in w and "rendered with Chromium" in w and "empty mount element" in w
               for w in response.warnings), response.warnings


@needs_chromium
@module_loop
async def test_a_shell_sent_as_octet_stream_is_sniffed_as_html_and_rendered(world):
    """The body's type after sniffing is the sniffed one: the shell is told apart, rendered (the browser,
    which would take octet-stream for a download, is given the type the read settled on) and said as HTML."""
    never = await world.reader.fetch(world.url("/built-unlabelled"), render="never")
    assert never.content_type == "text/html" and never.may_require_js is True and never.rendered is False
    response = await world.reader.fetch(world.url("/built-unlabelled"))
    assert response.content_type == "text/html" and response.rendered is True, response.warnings
    assert SENTENCE in response.content and response.title == TITLE


@needs_chromium
@module_loop
async def test_the_browser_is_given_the_client_s_fragment_a_hash_routed_app_shows_by_it(world):
    """The fragment is never sent to the server (one plain read for every fragment), but the render navigates
    with it: a hash-routed app's script reads it to choose what to show."""
    response = await world.reader.fetch(world.url("/hash-app#tides"))
    assert response.rendered is True and SENTENCE in response.content and response.title == TITLE
    assert response.final_url == world.url("/hash-app#tides")
    home = await world.reader.fetch(world.url("/hash-app"))
    assert home.rendered is True and SENTENCE not in home.content
    assert "#" not in "".join(paths(world.site))


@needs_chromium
@module_loop
async def test_a_shell_that_fetches_its_text_as_json_comes_back_rendered(world):
    response = await world.reader.fetch(world.url("/spa"), format="text")
    assert response.rendered is True and response.may_require_js is True
    assert JSON_SENTENCE in response.content and "enable JavaScript" not in response.content
    assert "/article.json" in paths(world.site)


@needs_chromium
@module_loop
async def test_text_inside_web_components_shadow_roots_comes_back(world):
    response = await world.reader.fetch(world.url("/components"))
    assert response.rendered and SENTENCE in response.content and PARAGRAPHS[2] in response.content
    assert response.title == TITLE  # the named slot, filled with the host's own child
    assert "Written by the keepers themselves." in response.content  # the default slot


@needs_chromium
@module_loop
async def test_text_inside_closed_shadow_roots_comes_back_too_and_the_page_still_sees_them_closed(world):
    response = await world.reader.fetch(world.url("/closed-components"))
    assert response.rendered and SENTENCE in response.content and PARAGRAPHS[2] in response.content
    assert response.title == TITLE and "Written by the keepers themselves." in response.content
    assert "Seen by the page: shadowRoot null, attachShadow native true." in response.content


@needs_chromium
@module_loop
async def test_a_render_sharing_one_under_a_shorter_deadline_is_not_cut_short_by_it(world):
    """A search's read of an app shell (a 1.5 s window) and a fetch of it at once: the fetch joins the
    render the search's read started, which runs out of the window on a page the browser gets after two
    seconds; the fetch, whose own time is far from over, renders again and gets the text."""
    url = world.url("/slow-render")
    async with Reader(settings(fetch_cache_ttl_s=60)) as reader:  # renders are shared with the page cache on
        loop = asyncio.get_running_loop()
        windowed = asyncio.create_task(reader.document(url, markdown=True, ignore_robots=False,
                                                       deadline=loop.time() + 1.5))
        flights, _ = reader._renders._flights.get()
        while not flights and not windowed.done():  # the window's render under way: the fetch joins it
            await asyncio.sleep(0.01)
        fetched = asyncio.create_task(reader.fetch(url))
        document, _ = await windowed
        assert document.rendered is False and any("rendering it failed" in w for w in document.warnings)
        response = await fetched
        assert response.rendered is True and SENTENCE in response.content


@needs_chromium
@module_loop
async def test_render_never_says_the_page_may_need_scripts_and_returns_the_shell(world):
    response = await world.reader.fetch(world.url("/spa"), render="never")
    assert response.rendered is False and response.may_require_js is True
    assert JSON_SENTENCE not in response.content
    assert response.content == "You need to enable JavaScript to run this app."
    assert any("render=never" in w and "a noscript that asks for JavaScript" in w for w in response.warnings)


@needs_chromium
@module_loop
async def test_a_plain_article_is_not_rendered_under_auto_and_starts_no_browser():
    async with Outsider():
        site = await StandIn(routes({"/robots.txt": page("User-agent: *\nDisallow:\n", content_type="text/plain"),
                                     "/post": page(article_html())})).start()
        reader = Reader(settings())
        try:
            response = await reader.fetch(site.url + "/post")
            assert response.rendered is False and response.may_require_js is False and response.warnings == []
            assert reader._renderer is None  # nothing of the renderer was even made
            always = await reader.fetch(site.url + "/post", render="always")
            assert always.rendered is True and always.may_require_js is False
            assert "Rust's asynchronous model" in always.content
        finally:
            await reader.close()
            await site.stop()


@needs_chromium
@module_loop
async def test_behind_the_operator_s_proxy_a_rendered_page_leaves_through_it(world):
    """With the `proxy` setting a plain read goes through the operator's proxy; a rendered page's requests do
    too (tunnels to the checked address), not straight out; a proxy that will not carry them is said."""
    from test_proxies import HttpProxy

    operator = await HttpProxy().start()
    port = world.site.url.rsplit(":", 1)[1]
    try:
        async with Reader(settings(proxy=operator.url()), resolver=world.dns) as reader:
            response = await reader.fetch(world.url("/built"))
        assert response.rendered is True and SENTENCE in response.content, response.warnings
        tunnels = [target for method, target, _ in operator.seen if method == "CONNECT"]
        assert tunnels and set(tunnels) == {f"127.0.0.1:{port}"}  # the document and its script, as tunnels
    finally:
        await operator.stop()
    # A proxy that forwards plain requests but opens no tunnel: the plain read gets the shell, the render
    # cannot get out, and the read says so (the shell as sent, the proxy's answer in the warning).
    strict = await HttpProxy(refuse_tunnels=True).start()
    try:
        async with Reader(settings(proxy=strict.url()), resolver=world.dns) as reader:
            response = await reader.fetch(world.url("/built"))
        assert response.rendered is False and response.may_require_js is True
        assert any("the proxy" in w and "403" in w for w in response.warnings), response.warnings
        assert ("CONNECT", f"127.0.0.1:{port}") in [(method, target) for method, target, _ in strict.seen]
    finally:
        await strict.stop()


@needs_chromium
@module_loop
async def test_reads_of_one_shell_at_once_share_one_render(world):
    """Several questions asked of one shell page at once: one plain request, one render, every read its own
    passages from the rendered text."""
    def asked() -> int:
        return sum(1 for seen in world.site.requests if seen.path == "/built")

    before = asked()
    async with Reader(settings(fetch_cache_ttl_s=600), resolver=world.dns) as reader:
        answers = await asyncio.gather(*(reader.fetch(world.url("/built"), query=q) for q in
                                         ("Who logged passing ships?", "Where did the keepers work?", "What ledger?")))
    assert all(answer.rendered and answer.passages for answer in answers)
    assert asked() - before == 2  # the plain read and the browser's, once each


@needs_chromium
@module_loop
async def test_the_page_cache_keeps_rendered_and_plain_text_apart(world):
    reader = Reader(settings(fetch_cache_ttl_s=600))
    try:
        plain = await reader.fetch(world.url("/built"), render="never")
        rendered = await reader.fetch(world.url("/built"))
        assert not plain.cached and not rendered.cached and rendered.rendered and SENTENCE in rendered.content
        again_plain = await reader.fetch(world.url("/built"), render="never")
        again_rendered = await reader.fetch(world.url("/built"), render="auto")
        assert again_plain.cached and again_plain.content == plain.content and not again_plain.rendered
        assert again_rendered.cached and again_rendered.content == rendered.content and again_rendered.rendered
        assert again_rendered.may_require_js and again_plain.may_require_js
    finally:
        await reader.close()


@needs_chromium
@module_loop
async def test_passages_offsets_and_verify_read_the_rendered_text(world):
    from plugin.reading.reader import slice_text
    from plugin.reading.verify import verify_with

    reader = Reader(settings(fetch_cache_ttl_s=600))
    try:
        whole = await reader.fetch(world.url("/built"), max_chars=100000)
        focused = await reader.fetch(world.url("/built"), query="what did lighthouse keepers log in the ledger")
        assert focused.rendered and focused.passages
        best = focused.passages[0]
        assert SENTENCE in best.text and whole.content[best.start:best.end] == best.text
        assert slice_text(whole.content, best.start, best.end - best.start)[0] == best.text
        checked = await verify_with(reader, world.url("/built"), "keepers on the northern coast logged every ship"
                                    " in a bound ledger")
        assert checked.found is False  # "passing" is missing: not a match
        checked = await verify_with(reader, world.url("/built"), SENTENCE)
        assert checked.found and checked.rendered and checked.may_require_js
        assert whole.content[checked.start:checked.end] == SENTENCE
    finally:
        await reader.close()


# ----- safe by construction -----
@needs_chromium
@module_loop
async def test_nothing_a_rendered_page_asks_for_reaches_outside_the_allowed_block(world):
    response = await world.reader.fetch(world.url("/outside"))
    assert response.rendered is True and JSON_SENTENCE in response.content
    assert world.outsider.connections == 0
    refused = next(w for w in response.warnings if w.startswith("the rendered page asked for what a read may not"))
    assert "127.0.0.2" in refused and "intranet.example" in refused and "localhost" in refused
    assert any("tried to move to another page" in w and "by-moving-the-page" in w for w in response.warnings)
    seen = paths(world.site)
    assert "/go-out" in seen  # the redirect was asked for; where it pointed was not reached
    assert world.dns.asked.count("intranet.example") >= 1  # the name was resolved by our guard, then refused


@needs_chromium
@module_loop
async def test_a_websocket_to_an_allowed_host_goes_through_the_guarded_way_out(world):
    response = await world.reader.fetch(world.url("/ws-shell"))
    assert response.rendered and JSON_SENTENCE in response.content


@needs_chromium
@module_loop
async def test_pop_ups_are_closed_dialogs_dismissed_and_downloads_refused(world, monkeypatch):
    """With Chromium's own pop-up blocker off (it stops pop-ups without a user's click by itself), the
    renderer's guard is what closes them: a pop-up is held before it runs and closed unseen."""
    import plugin.reading.chromium as chromium

    flags = chromium.launch_flags
    monkeypatch.setattr(chromium, "launch_flags", lambda *a: [*flags(*a), "--disable-popup-blocking"])
    reader = Reader(settings(), resolver=world.dns)
    try:
        response = await reader.fetch(world.url("/popups"))
        assert response.rendered is True and SENTENCE in response.content  # the dialogs did not stop the script
        seen = paths(world.site)
        assert "/popup-opened" not in seen and "/popup-clicked" not in seen
        assert any(w.startswith("closed 1 pop-up") for w in response.warnings), response.warnings
        assert any(w.startswith("refused the download") and "/file.bin" in w for w in response.warnings)
        browser = reader.renderer().browser()
        downloaded = [name for _, _, names in os.walk(browser.profile) for name in names if "file.bin" in name]
        home = Path.home() / "Downloads"
        assert downloaded == [] and not (home.exists() and any("file.bin" in p.name for p in home.iterdir()))
    finally:
        await reader.close()


@needs_chromium
@module_loop
async def test_each_read_has_a_fresh_context_no_cookies_or_storage_carried_over(world):
    first = await world.reader.fetch(world.url("/storage"))
    second = await world.reader.fetch(world.url("/storage"))
    assert first.rendered and second.rendered
    assert "earlier one: [||]" in first.content and "earlier one: [||]" in second.content


@needs_chromium
@module_loop
async def test_no_local_file_is_read(world):
    response = await world.reader.fetch(world.url("/files"))
    assert response.rendered and "Leaked: []" in response.content
    assert "root:" not in response.content and "Chromium" not in response.content


@needs_chromium
@module_loop
async def test_a_move_to_a_page_robots_txt_disallows_is_not_followed(world):
    response = await world.reader.fetch(world.url("/moves"))
    assert response.rendered and SENTENCE in response.content
    assert "/private/secret" not in paths(world.site)
    assert any("tried to move" in w and "robots.txt disallows" in w for w in response.warnings)


@needs_chromium
@module_loop
async def test_time_and_requests_per_page_are_capped(world):
    reader = Reader(settings(render_timeout_ms=1500, render_max_requests=5), resolver=world.dns)
    try:
        for path in ("/never-quiet", "/never-loads"):  # a request every 40 ms; an image that never comes
            response = await reader.fetch(world.url(path))
            assert response.rendered and SENTENCE in response.content, path  # the time cap answers
            assert any("still loading or changing after 1500 ms" in w for w in response.warnings), (path, response.warnings)
        quiet = await reader.fetch(world.url("/never-quiet"))
        assert any("more than 5 requests (render_max_requests)" in w for w in quiet.warnings), quiet.warnings
    finally:
        await reader.close()


@needs_chromium
@module_loop
async def test_the_rendering_browser_says_chrome_not_headless_chrome(world):
    """`HeadlessChrome/…` in the user agent is the plainest sign of a headless browser: the rendering
    browser says Chrome of its own version on this system, to the server and to the page's scripts, and
    its client hints tell the same story (watched failing before the user agent was set)."""
    import plugin.reading.chromium as chromium

    major = chromium.installed_version(CHROMIUM).split(".")[0]
    response = await world.reader.fetch(world.url("/who"), format="text")
    assert response.rendered is True, response.warnings
    agent = chromium.user_agent(chromium.installed_version(CHROMIUM))
    assert f"Sent as [{agent}]" in response.content and f"The script sees [{agent}]" in response.content
    assert "HeadlessChrome" not in response.content and f"Chrome/{major}.0.0.0" in agent
    assert f'"Chromium";v="{major}"' in response.content  # the hints name the same version


@needs_chromium
@module_loop
async def test_a_page_the_browser_is_turned_away_from_is_read_as_sent(world):
    response = await world.reader.fetch(world.url("/bot-wall"))
    assert response.rendered is False and response.may_require_js is True
    assert "Checking your browser" not in response.content
    assert any("the browser was answered HTTP 403" in w for w in response.warnings), response.warnings


# ----- the browser's life -----
def group_alive(pgid: int) -> bool:
    """Whether any process of the group still runs (zombies waiting for their reaper do not count)."""
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[1].split()
        if int(fields[2]) == pgid and fields[0] != "Z":
            return True
    return False


async def gone(pgid: int) -> bool:
    for _ in range(200):  # at most 10 s: a loaded machine reaps slowly
        if not group_alive(pgid):
            return True
        await asyncio.sleep(0.05)
    return False


@needs_chromium
@module_loop
async def test_a_crashed_browser_is_replaced_and_none_outlives_the_reader(world):
    reader = Reader(settings(), resolver=world.dns)
    try:
        assert (await reader.fetch(world.url("/built"))).rendered
        first = reader.renderer().browser()
        os.killpg(first.pid, signal.SIGKILL)
        assert await gone(first.pid)
        again = await reader.fetch(world.url("/built"))  # a new browser, or the plain text saying why not
        if not again.rendered:
            assert any("went away" in w for w in again.warnings), again.warnings
            again = await reader.fetch(world.url("/built"))
        assert again.rendered and SENTENCE in again.content
        second = reader.renderer().browser()
        assert second is not None and second.pid != first.pid and reader.renderer().launches == 2
    finally:
        await reader.close()
    assert await gone(second.pid)
    assert not Path(second.profile).exists()


@needs_chromium
@module_loop
async def test_a_hung_browser_is_replaced(world, monkeypatch):
    import plugin.reading.render as render

    monkeypatch.setattr(render, "PROBE_TIMEOUT_S", 0.5)
    monkeypatch.setattr(render, "COMMAND_TIMEOUT_S", 1.5)
    reader = Reader(settings(render_timeout_ms=2000), resolver=world.dns)
    try:
        assert (await reader.fetch(world.url("/built"))).rendered
        hung = reader.renderer().browser()
        os.kill(hung.pid, signal.SIGSTOP)
        try:
            stuck = await reader.fetch(world.url("/built"))
        finally:
            try:
                os.killpg(hung.pid, signal.SIGCONT)
            except ProcessLookupError:
                pass
        assert not stuck.rendered and any("stopped answering" in w for w in stuck.warnings), stuck.warnings
        assert await gone(hung.pid)
        fresh = await reader.fetch(world.url("/built"))
        assert fresh.rendered and reader.renderer().browser().pid != hung.pid
    finally:
        await reader.close()


@needs_chromium
@module_loop
async def test_search_read_renders_a_shell_row(world):
    from plugin.pipeline.searcher import Searcher
    from standins import bing_page

    engine = await StandIn(page(bing_page([("Keepers", world.url("/built"), "lighthouse keepers ledger"),
                                           ("Post", world.url("/post"), "lighthouse keepers ledger")]))).start()
    searcher = Searcher(settings(engines=["bing"], endpoints={"bing": engine.url}, deadline_ms=30000,
                                 read_min_ms=30000))
    searcher._reader = world.reader  # the shared browser (closed with the module, not with this searcher)
    try:
        response = await searcher.search("lighthouse keepers ledger", read=2)
        rows = {row.url: row for row in response.results}
        shell_row, plain_row = rows[world.url("/built")], rows[world.url("/post")]
        assert shell_row.rendered is True and shell_row.may_require_js is True and SENTENCE in shell_row.content
        assert plain_row.rendered is False and plain_row.may_require_js is False
        assert any(w.startswith("result ") and "built by scripts" in w for w in response.warnings)
        never = await searcher.search("lighthouse keepers ledger", read=2, render="never", cache=False)
        row = next(r for r in never.results if r.url == world.url("/built"))
        assert row.rendered is False and row.may_require_js is True and SENTENCE not in (row.content or "")
    finally:
        searcher._reader = None
        await searcher.close()
        await engine.stop()


# ----- the command line, as the issue checks it -----
def chromium_processes_under(folder: Path) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            command = Path(f"/proc/{entry}/cmdline").read_bytes().replace(b"\0", b" ").decode("utf-8", "replace")
            state = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if str(folder) in command and state != "Z":
            found.append(int(entry))
    return found


@needs_chromium
@module_loop
async def test_metasearch_fetch_renders_and_leaves_no_browser_behind(world, short_tmp):
    tmp_path = short_tmp  # the browser's profile lands here, and its processes are found by it
    environment = {k: v for k, v in os.environ.items() if not k.startswith("METASEARCH_")}
    environment.update({"PYTHONPATH": str(ROOT), "XDG_CONFIG_HOME": os.environ["XDG_CONFIG_HOME"],
                        "METASEARCH_STATE_DIR": os.environ["METASEARCH_STATE_DIR"], "METASEARCH_CACHE_TTL_S": "0",
                        "METASEARCH_ALLOW_PRIVATE_HOSTS": "127.0.0.1/32", "TMPDIR": str(tmp_path)})

    async def cli(*args: str) -> tuple[int, dict]:
        proc = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "plugin.surfaces.cli", "fetch", *args, "--json", cwd=ROOT, env=environment,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
        out, err = await asyncio.wait_for(proc.communicate(), 120)
        assert chromium_processes_under(tmp_path) == [] or await _none_left(tmp_path), err.decode()
        return proc.returncode, json.loads(out)

    before = world.outsider.connections
    code, data = await cli(world.url("/outside"))
    assert code == 0 and data["rendered"] is True and JSON_SENTENCE in data["content"], "\n".join(data["warnings"])
    code, data = await cli(world.url("/spa"), "--render", "never")
    assert code == 0 and data["may_require_js"] is True and data["rendered"] is False
    assert JSON_SENTENCE not in data["content"]
    code, data = await cli(world.url("/post"))
    assert code == 0 and data["rendered"] is False and data["may_require_js"] is False
    assert world.outsider.connections == before == 0
    assert chromium_processes_under(tmp_path) == []


@pytest.fixture
def short_tmp():
    """A temporary folder with a short path (a test runner's own may be too long for the browser to keep
    its profile under; see the test below)."""
    folder = Path(tempfile.mkdtemp(prefix="render-", dir="/tmp"))
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


@needs_chromium
@module_loop
async def test_a_long_temporary_directory_does_not_stop_the_browser(tmp_path, short_tmp, monkeypatch):
    """Chromium puts a Unix socket under TMPDIR and will not start when its path is longer than 107 bytes:
    the profile (the browser's TMPDIR) goes to /tmp then (it did not: every render failed under a long
    TMPDIR, as pytest-xdist's workers have)."""
    import plugin.reading.chromium as chromium

    long = tmp_path / ("d" * 60)
    long.mkdir()
    monkeypatch.setenv("TMPDIR", str(long))
    monkeypatch.setattr(tempfile, "tempdir", None)  # gettempdir() reads TMPDIR again
    short = short_tmp
    assert chromium.profile_folder().startswith("/tmp/metasearch-chromium-")
    monkeypatch.setenv("TMPDIR", str(short))
    monkeypatch.setattr(tempfile, "tempdir", None)
    assert chromium.profile_folder().startswith(str(short) + "/metasearch-chromium-")
    monkeypatch.setenv("TMPDIR", str(long))
    monkeypatch.setattr(tempfile, "tempdir", None)
    browser = await chromium.Chromium.launch(CHROMIUM, deny_proxy_port=9)
    try:
        assert browser.version.startswith(("Chrome/", "HeadlessChrome/"))
    finally:
        await browser.close()


async def _none_left(folder: Path) -> bool:
    for _ in range(200):
        if not chromium_processes_under(folder):
            return True
        await asyncio.sleep(0.05)
    return False


@needs_chromium
@module_loop
async def test_pages_at_once_are_capped(world, monkeypatch):
    import plugin.reading.render as render

    running, peak = 0, 0
    read = render.PageRun.read

    async def counted(self, *args, **kwargs):
        nonlocal running, peak
        running += 1
        peak = max(peak, running)
        try:
            return await read(self, *args, **kwargs)
        finally:
            running -= 1

    monkeypatch.setattr(render.PageRun, "read", counted)
    reader = Reader(settings(render_concurrency=1), resolver=world.dns)
    try:
        responses = await asyncio.gather(*(reader.fetch(world.url(path)) for path in ("/built", "/spa", "/built")))
    finally:
        await reader.close()
    assert all(r.rendered for r in responses) and peak == 1
    assert reader.renderer().launches == 1  # one browser for every read of the process


@needs_chromium
@module_loop
async def test_a_browser_started_by_asyncio_run_fetch_ends_with_that_loop(world, monkeypatch):
    """The module-level API keeps a reader per settings; its browser belongs to the event loop that
    started it and is closed when that loop ends (`asyncio.run(fetch(...))` per call leaks none)."""
    import plugin
    import plugin.reading.chromium as chromium

    started: list[chromium.Chromium] = []
    launch = chromium.Chromium.launch.__func__

    async def recorded(cls, *args, **kwargs):
        browser = await launch(cls, *args, **kwargs)
        started.append(browser)
        return browser

    monkeypatch.setattr(chromium.Chromium, "launch", classmethod(recorded))
    # A loop of its own on a worker thread, as a script's asyncio.run; the stand-ins keep serving here.
    response = await asyncio.to_thread(lambda: asyncio.run(plugin.fetch(world.url("/built"),
                                                                        settings=settings())))
    assert response.rendered and len(started) == 1
    assert started[0].pid not in chromium._live  # closed with its loop, not left for the exit handler
    assert await gone(started[0].pid)
