"""Rendering a page that only a browser can show: the installed Chromium, safely, a fresh context per read.

    Renderer.render(url) ─ a render slot (render_concurrency at once) ─ the browser (started once per
        process and event loop, kept while reads come, closed render_keep_s after the last) ─ a fresh
        browser context whose proxy is this read's own guarded egress (plugin.reading.render_egress) ─
        navigate ─ load, then quiet (no request out for render_settle_ms), at most render_timeout_ms ─
        the DOM as HTML ─ the context disposed, the egress closed ─ Rendered

What a page may do is bounded by construction:
- every connection it makes goes through the read's egress, which resolves, checks and connects exactly
  as a plain read does (the browser resolves nothing and connects nowhere by itself: see
  plugin.reading.chromium.launch_flags);
- every target it opens is held before it runs (auto-attach, waiting for the debugger): a pop-up is
  closed, a frame or a worker gets the same request accounting and runs;
- requests are counted (render_max_requests), bytes too (render_max_bytes, at the egress); only http(s)
  and ws(s) go out; the top document and its redirects ask robots.txt as a plain read does;
- downloads are denied, JavaScript dialogs dismissed, `window.open` returns null, WebRTC is removed;
- a fresh browser context per read: no cookie, storage or cache of one read is seen by another;
- a browser that crashed or stopped answering is killed, and the next read starts a new one; none
  outlives the Reader (Searcher, CLI command) that started it, nor the event loop, nor this process.
"""

from __future__ import annotations

import asyncio
import base64
import functools
from dataclasses import dataclass, field
from typing import Awaitable, Callable
from urllib.parse import urlsplit

from plugin.errors import FetchError
from plugin.infra.egress import tls_context
from plugin.infra.lifecycle import LoopBound, PerLoop
from plugin.infra.logs import get_logger
from plugin.reading.addresses import GuardedResolver, Target
from plugin.reading.chromium import BrowserGone, Chromium, ProtocolError, find_chromium
from plugin.reading.documents import GENERIC_TYPES, media_type
from plugin.reading.hops import page_proxy
from plugin.reading.render_egress import DenyAll, ReadEgress
from plugin.settings import Settings

log = get_logger("metasearch.render")

COMMAND_TIMEOUT_S = 10.0  # a DevTools command that takes longer: the browser is hung
PROBE_TIMEOUT_S = 2.0
POLL_S = 0.03
# The DOM as HTML; text a component keeps in a shadow root (web components) is moved into the light DOM
# first, its slots filled with the host's own children, so that serialising the page keeps it. A closed
# root, out of reach of `host.shadowRoot`, is found where INIT_SCRIPT keeps each one a script attaches.
CLOSED_ROOTS = "metasearch.closedShadowRoots"
SNAPSHOT = """(() => {
  const closed = window[Symbol.for('%s')];
  const rootOf = (host) => host.shadowRoot || (closed && closed.get(host)) || null;
  const flatten = (root) => {
    for (const host of root.querySelectorAll('*')) {
      const shadow = rootOf(host);
      if (!shadow) continue;
      flatten(shadow);
      const holder = document.createElement('div');
      holder.innerHTML = shadow.innerHTML;
      for (const slot of holder.querySelectorAll('slot')) {
        const name = slot.getAttribute('name');
        const given = [...host.childNodes].filter((node) => name
          ? node.nodeType === 1 && node.getAttribute('slot') === name
          : !(node.nodeType === 1 && node.hasAttribute('slot')));
        slot.replaceWith(...(given.length ? given : [...slot.childNodes]));
      }
      host.replaceChildren(...holder.childNodes);
    }
  };
  try { flatten(document); } catch (e) {}
  const nav = performance.getEntriesByType('navigation')[0];
  const root = document.documentElement;
  return {html: root ? root.outerHTML : '', url: location.href, type: document.contentType || '',
          status: (nav && nav.responseStatus) || 0};
})()""" % CLOSED_ROOTS
# Before any script of the page, in every frame: no pop-ups, no blocking dialogs, no peer connections; the
# closed shadow roots scripts attach kept for the snapshot.
INIT_SCRIPT = """(() => {
  const nothing = () => null;
  try { Object.defineProperty(window, 'open', {value: nothing, writable: false, configurable: false}); } catch (e) {}
  for (const [name, value] of [['alert', undefined], ['confirm', false], ['prompt', null], ['print', undefined]]) {
    try { Object.defineProperty(window, name, {value: () => value, writable: false, configurable: false}); } catch (e) {}
  }
  for (const name of ['RTCPeerConnection', 'webkitRTCPeerConnection', 'RTCDataChannel', 'RTCIceCandidate']) {
    try { delete window[name]; } catch (e) {}
  }
  // Each closed shadow root a script attaches, kept by its host for the snapshot (a Proxy: the method
  // still reads as native code, and the page gets the root it asked for).
  try {
    const closed = new WeakMap();
    const described = Object.getOwnPropertyDescriptor(Element.prototype, 'attachShadow');
    const attach = described.value;
    const kept = new Proxy(attach, {apply(target, host, args) {
      const root = Reflect.apply(target, host, args);
      if (args[0] && args[0].mode === 'closed') closed.set(host, root);
      return root;
    }});
    Object.defineProperty(Element.prototype, 'attachShadow', {...described, value: kept});
    Object.defineProperty(window, Symbol.for('%s'), {value: closed, configurable: false});
  } catch (e) {}
})();""" % CLOSED_ROOTS
OUTGOING_SCHEMES = frozenset({"http", "https", "ws", "wss"})

Robots = Callable[[Target, float], Awaitable[None]]


class RenderFailed(Exception):
    """The page could not be rendered; the message says why (for the read's warning)."""


class BrowserHung(Exception):
    pass


@dataclass
class Rendered:
    html: str
    url: str
    status: int
    content_type: str
    settled: bool
    elapsed_ms: int
    warnings: list[str] = field(default_factory=list)
    requests: int = 0
    connections: list[tuple[str, str, int]] = field(default_factory=list)  # (host, address, port) connected


class _LoopState:
    """What belongs to one event loop: the browser, the deny-all proxy, the render slots."""

    def __init__(self, slots: int):
        self.browser: Chromium | None = None
        self.deny: DenyAll | None = None
        self.lock = asyncio.Lock()
        self.slots = asyncio.Semaphore(slots)
        self.runs: dict[str, "PageRun"] = {}  # browser context id -> the read rendering in it
        self.active = 0
        self.idle: asyncio.TimerHandle | None = None
        self.closer: LoopBound | None = None
        # The page pool: one blank page in a fresh context, made ready after a render for the next read
        # (a new page costs a renderer process start, a third of a warm render). Used once, then disposed.
        self.spare: asyncio.Task | None = None


class Renderer:
    def __init__(self, settings: Settings, *, guard: GuardedResolver, check: Callable[[object], Target]):
        """`guard` and `check`: the page client's guarded resolver and URL check, so that a rendered page
        reaches exactly what a plain read may."""
        self.settings = settings
        self.guard = guard
        self.check = check
        self.executable, self.unavailable = find_chromium(settings.chromium)
        self._state: PerLoop[_LoopState] = PerLoop(lambda: _LoopState(settings.render_concurrency))
        self.launches = 0  # browsers started (tests and benchmarks read it)
        self.renders = 0

    @property
    def available(self) -> bool:
        return self.executable is not None

    def browser(self) -> Chromium | None:
        """The running loop's browser, if one is up."""
        state = self._state.current()
        return state.browser if state is not None else None

    async def render(self, url: str, *, deadline: float, robots: Robots | None = None) -> Rendered:
        """The page at `url` (already checked, robots.txt already asked by the plain read) as the browser
        shows it, by `deadline` (loop time) at the latest; RenderFailed says why not."""
        if self.executable is None:
            raise RenderFailed(self.unavailable)
        loop = asyncio.get_running_loop()
        started = loop.time()
        # Waiting for a slot, starting the browser and opening a page are bounded by the read's deadline;
        # the page's own time (render_timeout_ms) starts when it is asked for.
        cap = deadline
        state = self._state.get()
        try:
            async with asyncio.timeout_at(cap):
                await state.slots.acquire()
        except (asyncio.TimeoutError, TimeoutError):
            raise RenderFailed(f"no render slot came free in time ({self.settings.render_concurrency} pages are "
                               "rendered at once at most)") from None
        state.active += 1
        if state.idle is not None:
            state.idle.cancel()
            state.idle = None
        browser: Chromium | None = None
        try:
            browser = await self._browser(state, cap)
            run = await self._page(state, browser, cap)
            lost = False
            try:
                cap = min(deadline, loop.time() + self.settings.render_timeout_ms / 1000)
                rendered = await run.read(url, robots, cap, started)
                self.renders += 1
                return rendered
            except (BrowserGone, BrowserHung):
                lost = True
                raise
            finally:
                if lost:  # killed first, so that disposing of the page asks nothing of it
                    await self._discard(state, browser)
                    await run.dispose()
                elif not await run.dispose():
                    await self._discard(state, browser)
        except (BrowserGone, BrowserHung) as exc:  # while the page was being made or read
            if browser is not None:
                await self._discard(state, browser)
            raise RenderFailed(f"the browser {'stopped answering' if isinstance(exc, BrowserHung) else 'went away'}"
                               f" ({exc}); a new one is started for the next read") from None
        finally:
            state.active -= 1
            state.slots.release()
            if state.browser is not None and state.browser.alive:
                if state.spare is None:
                    state.spare = loop.create_task(self._new_page(state, state.browser))
                    state.spare.add_done_callback(_retrieved)
                if state.active == 0:
                    state.idle = loop.call_later(self.settings.render_keep_s, self._close_idle, state)

    async def _page(self, state: _LoopState, browser: Chromium, cap: float) -> "PageRun":
        """A blank page in a fresh context: the spare when it is ready (or nearly), else a new one."""
        spare, state.spare = state.spare, None
        if spare is not None:
            try:
                async with asyncio.timeout_at(cap):
                    run = await asyncio.shield(spare)
                if run.browser is browser and browser.alive:
                    return run
                await run.dispose()
            except (asyncio.TimeoutError, TimeoutError):
                spare.cancel()
                raise RenderFailed("no page was ready before the read's deadline") from None
            except (RenderFailed, BrowserGone, BrowserHung, ProtocolError):
                pass  # the spare failed; make a page for this read
        task = asyncio.get_running_loop().create_task(self._new_page(state, browser))
        try:
            async with asyncio.timeout_at(cap):
                return await asyncio.shield(task)
        except (asyncio.TimeoutError, TimeoutError):
            task.cancel()
            task.add_done_callback(_retrieved)
            raise RenderFailed("the browser did not open a page in time") from None

    async def _new_page(self, state: _LoopState, browser: Chromium) -> "PageRun":
        egress = await ReadEgress(self.guard, self.check, max_bytes=self.settings.render_max_bytes,
                                  max_connections=self.settings.render_max_requests,
                                  via=functools.partial(page_proxy, settings=self.settings),
                                  proxy_tls=tls_context(self.settings.ca_bundle)).start()
        run = PageRun(self, state, browser, egress)
        try:
            await run.prepare()
        except BaseException:
            await run.dispose()
            raise
        return run

    async def _browser(self, state: _LoopState, cap: float) -> Chromium:
        async with state.lock:
            browser = state.browser
            if browser is not None and browser.alive:
                return browser
            if browser is not None:
                await self._discard(state, browser)
            if state.deny is None:
                state.deny = await DenyAll().start()
            if state.closer is None:
                state.closer = LoopBound(lambda: self._close_state(state))
            timeout = max(cap - asyncio.get_running_loop().time(), 0.1)
            try:
                browser = await Chromium.launch(self.executable, deny_proxy_port=state.deny.port,  # type: ignore[arg-type]
                                                timeout=timeout)
            except BrowserGone as exc:
                raise RenderFailed(str(exc)) from None
            self.launches += 1
            browser.connection.listeners[None] = lambda method, params: self._browser_event(state, method, params)
            try:
                await browser.connection.send("Target.setAutoAttach", {
                    "autoAttach": True, "waitForDebuggerOnStart": True, "flatten": True}, timeout=COMMAND_TIMEOUT_S)
                await browser.connection.send("Browser.setDownloadBehavior", {"behavior": "deny"},
                                              timeout=COMMAND_TIMEOUT_S)
            except (BrowserGone, ProtocolError, asyncio.TimeoutError, TimeoutError) as exc:
                await browser.close()
                raise RenderFailed(f"the browser did not take its settings: {exc}") from None
            state.browser = browser
            log.info("started %s (pid %d) for rendering pages", browser.version, browser.pid)
            return browser

    def _browser_event(self, state: _LoopState, method: str, params: dict) -> None:
        if method == "Target.attachedToTarget":
            info = params.get("targetInfo", {})
            run = state.runs.get(info.get("browserContextId", ""))
            if run is not None:
                run.attached(params)
                return
            # Not a read's (the browser's first blank page): let it be, without us.
            browser = state.browser
            if browser is not None:
                session = params.get("sessionId")
                if params.get("waitingForDebugger"):
                    browser.connection.notify("Runtime.runIfWaitingForDebugger", session=session)
                browser.connection.notify("Target.detachFromTarget", {"sessionId": session})
        elif method == "Browser.downloadWillBegin":
            for run in state.runs.values():
                if params.get("frameId") in run.frames:
                    run.downloads.append(params.get("url", "")[:200])

    async def _discard(self, state: _LoopState, browser: Chromium) -> None:
        """A browser that crashed or hung: killed; the next render starts another."""
        if state.browser is browser:
            state.browser = None
        await self._drop_spare(state)
        for context, run in list(state.runs.items()):
            if run.browser is browser:
                state.runs.pop(context, None)
        await browser.close()

    async def _drop_spare(self, state: _LoopState) -> None:
        spare, state.spare = state.spare, None
        if spare is None:
            return
        if not spare.done():
            spare.cancel()
        try:
            run = await spare
        except BaseException:  # noqa: BLE001 - cancelled or failed: nothing left to dispose
            return
        await run.dispose()

    def _close_idle(self, state: _LoopState) -> None:
        state.idle = None
        if state.active == 0 and state.browser is not None:
            browser, state.browser = state.browser, None

            async def close() -> None:
                await self._drop_spare(state)
                await browser.close()

            task = asyncio.get_running_loop().create_task(close())
            task.add_done_callback(_retrieved)

    async def _close_state(self, state: _LoopState) -> None:
        if state.idle is not None:
            state.idle.cancel()
            state.idle = None
        await self._drop_spare(state)
        browser, state.browser = state.browser, None
        if browser is not None:
            await browser.close()
        deny, state.deny = state.deny, None
        if deny is not None:
            await deny.close()

    async def close(self) -> None:
        """Close this loop's browser (the others close with their loops, or at exit)."""
        state = self._state.current()
        if state is None:
            return
        closer, state.closer = state.closer, None
        if closer is not None:
            await closer.close()
        else:
            await self._close_state(state)


class PageRun:
    """One page in a fresh browser context: made ready blank (`prepare`), used for one read (`read`),
    then disposed with its context."""

    def __init__(self, renderer: Renderer, state: _LoopState, browser: Chromium, egress: ReadEgress):
        self.renderer = renderer
        self.settings = renderer.settings
        self.state = state
        self.browser = browser
        self.connection = browser.connection
        self.egress = egress
        self.url = ""
        self.robots: Robots | None = None
        loop = asyncio.get_running_loop()
        self.started = loop.time()
        self.cap = self.started + COMMAND_TIMEOUT_S
        self.asked = self.started  # when the page was asked for (read)
        self.context: str | None = None
        self.target: str | None = None
        self.session: str | None = None
        self.page_ready: asyncio.Future = loop.create_future()
        self.sessions: set[str] = set()
        self.frames: set[str] = set()
        self.inflight: set[str] = set()  # request ids sent and not yet finished or failed
        self.last_activity = self.started
        self.loaded = asyncio.Event()
        self.committed = False
        self.requests = 0
        self.over_requests = False
        self.popups = 0
        self.dialogs = 0
        self.downloads: list[str] = []
        self.refused_schemes: list[str] = []
        self.refusal: FetchError | None = None
        self.moves_refused: list[str] = []
        self.crashed = False
        self.main_status = 0
        self.tasks: set[asyncio.Task] = set()
        self.disposed = False

    # ----- the run -----
    async def prepare(self) -> None:
        """A fresh context whose proxy is this page's egress, a blank page in it, watched and ready."""
        send = self._send
        created = await send("Target.createBrowserContext", {
            "disposeOnDetach": True, "proxyServer": self.egress.proxy_url, "proxyBypassList": "<-loopback>"})
        self.context = created["browserContextId"]
        self.state.runs[self.context] = self
        await send("Browser.setDownloadBehavior", {"behavior": "deny", "browserContextId": self.context,
                                                   "eventsEnabled": True})
        target = await send("Target.createTarget", {"url": "about:blank", "browserContextId": self.context})
        self.target = target["targetId"]
        self.frames.add(self.target)
        try:
            await asyncio.wait_for(asyncio.shield(self.page_ready), COMMAND_TIMEOUT_S)
        except (asyncio.TimeoutError, TimeoutError):
            raise BrowserHung("the new page was not attached in time") from None

    async def read(self, url: str, robots: Robots | None, cap: float, started: float) -> Rendered:
        self.url, self.robots, self.cap, self.started = url, robots, cap, started
        self.asked = self.last_activity = asyncio.get_running_loop().time()
        self.loaded.clear()  # about:blank's load is not the page's
        self.egress.started()
        return await self._navigate_and_read()

    async def _navigate_and_read(self) -> Rendered:
        loop = asyncio.get_running_loop()
        try:
            navigated = await self._send("Page.navigate", {"url": self.url}, session=self.session,
                                         timeout=max(self.cap - loop.time(), 0.05))
        except (asyncio.TimeoutError, TimeoutError):
            await self._probe()  # a hung browser is replaced, a slow page is only this read's trouble
            raise RenderFailed(f"the page did not start loading within {self._budget_ms()} ms") from None
        if navigated.get("errorText"):
            if self.refusal is not None:
                raise self.refusal
            refused = "; ".join(self.egress.refused[:3])
            proxy = "; ".join(self.egress.proxy_failures[:2])
            raise RenderFailed(f"the browser could not load the page ({navigated['errorText']})"
                               + (f"; refused: {refused}" if refused else "")
                               + (f"; the proxy: {proxy}" if proxy else ""))
        settled = await self._settle()
        if self.crashed:
            raise RenderFailed("the page's renderer crashed")
        try:
            snapshot = await self._send("Runtime.evaluate", {"expression": SNAPSHOT, "returnByValue": True},
                                        session=self.session, timeout=min(5.0, max(self.cap - loop.time(), 1.0)))
        except (asyncio.TimeoutError, TimeoutError):
            await self._probe()
            raise RenderFailed("the page's scripts kept it too busy to be read") from None
        value = snapshot.get("result", {}).get("value") or {}
        html = value.get("html") or ""
        if len(html) > self.settings.fetch_max_bytes:
            html = html[:self.settings.fetch_max_bytes]
        warnings = self._warnings(settled)
        return Rendered(html=html, url=value.get("url") or self.url, status=int(value.get("status") or self.main_status
                                                                                 or 200),
                        content_type=value.get("type") or "text/html", settled=settled,
                        elapsed_ms=int((loop.time() - self.started) * 1000), warnings=warnings,
                        requests=self.requests, connections=list(self.egress.connected))

    async def _settle(self) -> bool:
        """Wait for the load event, then for quiet: no request out for render_settle_ms. False when the
        cap came first."""
        loop = asyncio.get_running_loop()
        quiet = self.settings.render_settle_ms / 1000
        while True:
            now = loop.time()
            if self.crashed or self.egress.over_cap is not None:
                return False
            if self.loaded.is_set() and not self.inflight and now - self.last_activity >= quiet:
                return True
            if now >= self.cap:
                return False
            await asyncio.sleep(min(POLL_S, max(self.cap - now, 0.001)))

    def _warnings(self, settled: bool) -> list[str]:
        warnings: list[str] = []
        if not settled:
            warnings.append(f"the rendered page was still loading or changing after {self._budget_ms()} ms "
                            "(render_timeout_ms, or the read's deadline); its text is what it showed then")
        refused = self.egress.refused
        if refused:
            shown = "; ".join(refused[:5]) + (f"; and {len(refused) - 5} more" if len(refused) > 5 else "")
            warnings.append(f"the rendered page asked for what a read may not reach, refused: {shown}")
        if self.egress.proxy_failures:
            failures = self.egress.proxy_failures
            warnings.append("the proxy did not carry some of the rendered page's requests: " + "; ".join(failures[:3])
                            + (f"; and {len(failures) - 3} more" if len(failures) > 3 else ""))
        if self.egress.over_cap is not None:
            warnings.append(f"rendering stopped early: {self.egress.over_cap}")
        if self.over_requests:
            warnings.append(f"the rendered page made more than {self.settings.render_max_requests} requests "
                            "(render_max_requests); the rest were refused")
        if self.refused_schemes:
            warnings.append("the rendered page asked for addresses that are not http(s), refused: "
                            + ", ".join(self.refused_schemes[:3]))
        if self.moves_refused:
            warnings.append("the rendered page tried to move to another page, not followed: "
                            + "; ".join(self.moves_refused[:3]))
        if self.popups:
            warnings.append(f"closed {self.popups} pop-up{'s' if self.popups != 1 else ''} the page opened")
        if self.dialogs:
            warnings.append(f"dismissed {self.dialogs} dialog{'s' if self.dialogs != 1 else ''} the page opened")
        if self.downloads:
            warnings.append("refused the download the page started: " + ", ".join(list(dict.fromkeys(self.downloads))[:3]))
        return warnings

    def _budget_ms(self) -> int:
        return round((self.cap - self.asked) * 1000)

    async def _send(self, method: str, params: dict | None = None, *, session: str | None = None,
                    timeout: float | None = None) -> dict:
        """A command; one that gets no answer in `timeout` means a hung browser unless the caller handles
        the timeout (navigation, the snapshot)."""
        timeout = COMMAND_TIMEOUT_S if timeout is None else timeout
        try:
            return await self.connection.send(method, params, session=session, timeout=timeout)
        except ProtocolError as exc:
            if self.crashed:
                raise RenderFailed("the page's renderer crashed") from None
            raise RenderFailed(f"the browser refused {exc}") from None
        except (asyncio.TimeoutError, TimeoutError):
            if method in ("Page.navigate", "Runtime.evaluate"):
                raise
            raise BrowserHung(f"{method} got no answer in {timeout:.0f} s") from None

    async def _probe(self) -> None:
        """A busy page or a hung browser? The browser must still answer its own commands."""
        try:
            await self.connection.send("Browser.getVersion", timeout=PROBE_TIMEOUT_S)
        except (asyncio.TimeoutError, TimeoutError):
            raise BrowserHung("Browser.getVersion got no answer") from None

    async def dispose(self) -> bool:
        """The context closed (its pages, frames and workers with it), the egress too. False when the
        browser did not answer."""
        if self.disposed:
            return True
        self.disposed = True
        try:
            return await self._dispose()
        finally:
            await self.egress.close()

    async def _dispose(self) -> bool:
        for task in list(self.tasks):
            task.cancel()
        for session in self.sessions:
            self.connection.listeners.pop(session, None)
        if self.context is None:
            return True
        self.state.runs.pop(self.context, None)
        if not self.browser.alive:
            return True
        try:
            await self.connection.send("Target.disposeBrowserContext", {"browserContextId": self.context},
                                       timeout=COMMAND_TIMEOUT_S)
        except (asyncio.TimeoutError, TimeoutError):
            return False
        except (BrowserGone, ProtocolError):
            pass
        return True

    # ----- targets -----
    def attached(self, params: dict) -> None:
        """A target of this read's context: our page (the first), a pop-up (closed before it runs), or a
        worker (watched like the page)."""
        session = params.get("sessionId")
        info = params.get("targetInfo", {})
        kind = info.get("type")
        if kind == "page":
            if self.session is None and (self.target is None or info.get("targetId") == self.target):
                self.session = session
                self.sessions.add(session)
                self.connection.listeners[session] = lambda method, p: self.event(session, method, p)
                self._spawn(self._set_up_page(session))
                return
            self.popups += 1
            self.connection.notify("Target.closeTarget", {"targetId": info.get("targetId")})
            return
        self._child(session, kind)

    def _child(self, session: str, kind: str | None) -> None:
        """A frame in another process or a worker: the same accounting, then it runs."""
        self.sessions.add(session)
        self.connection.listeners[session] = lambda method, p: self.event(session, method, p)
        self._spawn(self._set_up_child(session, kind))

    async def _set_up_page(self, session: str) -> None:
        # Documents are also held at their response, for the top one's type (see _response).
        patterns = [{"urlPattern": "*", "requestStage": "Request"},
                    {"urlPattern": "*", "resourceType": "Document", "requestStage": "Response"}]
        try:
            await asyncio.gather(
                self._send("Page.enable", session=session),
                self._send("Network.enable", session=session),
                self._send("Fetch.enable", {"patterns": patterns}, session=session),
                self._send("Page.addScriptToEvaluateOnNewDocument", {"source": INIT_SCRIPT}, session=session),
                self._send("Page.setLifecycleEventsEnabled", {"enabled": True}, session=session),
                self._send("Target.setAutoAttach", {"autoAttach": True, "waitForDebuggerOnStart": True,
                                                    "flatten": True}, session=session))
            await self._send("Runtime.runIfWaitingForDebugger", session=session)
        except Exception as exc:  # noqa: BLE001 - handed to the run waiting for the page
            if not self.page_ready.done():
                self.page_ready.set_exception(exc)
                self.page_ready.exception()  # retrieved: a spare nobody waits for must not log it
            return
        except asyncio.CancelledError:
            if not self.page_ready.done():
                self.page_ready.cancel()
            raise
        if not self.page_ready.done():
            self.page_ready.set_result(session)

    async def _set_up_child(self, session: str, kind: str | None) -> None:
        steps = [self._send("Network.enable", session=session),
                 self._send("Fetch.enable", {"patterns": [{"urlPattern": "*", "requestStage": "Request"}]},
                            session=session)]
        if kind == "iframe":
            steps += [self._send("Page.enable", session=session),
                      self._send("Page.addScriptToEvaluateOnNewDocument", {"source": INIT_SCRIPT}, session=session),
                      self._send("Target.setAutoAttach", {"autoAttach": True, "waitForDebuggerOnStart": True,
                                                          "flatten": True}, session=session)]
        # A domain a kind of target lacks (a worker has no Page) is no reason to hold it.
        await asyncio.gather(*steps, return_exceptions=True)
        try:
            await self._send("Runtime.runIfWaitingForDebugger", session=session)
        except (RenderFailed, BrowserHung, BrowserGone):
            pass

    def _spawn(self, coroutine) -> None:
        task = asyncio.get_running_loop().create_task(coroutine)
        self.tasks.add(task)
        task.add_done_callback(self._done)

    def _done(self, task: asyncio.Task) -> None:
        self.tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.debug("render task failed: %r", task.exception())

    # ----- events -----
    def event(self, session: str, method: str, params: dict) -> None:
        now = asyncio.get_running_loop().time()
        if method == "Fetch.requestPaused":
            self._paused(session, params)
        elif method == "Network.requestWillBeSent":
            # By request id alone: a frame's document is announced to its parent and finished in its own
            # session (a frame from another site runs in a process, and a session, of its own).
            if not params.get("redirectResponse"):
                self.inflight.add(params.get("requestId", ""))
            self.last_activity = now
        elif method in ("Network.loadingFinished", "Network.loadingFailed"):
            self.inflight.discard(params.get("requestId", ""))
            self.last_activity = now
        elif method == "Network.responseReceived":
            self.last_activity = now
            if params.get("type") == "Document" and params.get("frameId") == self.target:
                self.main_status = int(params.get("response", {}).get("status") or 0)
        elif method == "Page.frameStartedLoading":
            if params.get("frameId") == self.target:
                self.loaded.clear()
            self.last_activity = now
        elif method == "Page.frameStoppedLoading":  # after its load, or a navigation given up (refused, a download)
            if params.get("frameId") == self.target:
                self.loaded.set()
            self.last_activity = now
        elif method == "Page.loadEventFired" and session == self.session:
            self.loaded.set()
            self.last_activity = now
        elif method == "Page.frameNavigated":
            frame = params.get("frame", {})
            self.frames.add(frame.get("id", ""))
            if not frame.get("parentId"):
                self.committed = True
            self.last_activity = now
        elif method == "Page.frameAttached":
            self.frames.add(params.get("frameId", ""))
        elif method == "Page.javascriptDialogOpening":
            self.dialogs += 1
            self.connection.notify("Page.handleJavaScriptDialog", {"accept": False}, session=session)
        elif method == "Target.attachedToTarget":
            child = params.get("sessionId")
            info = params.get("targetInfo", {})
            if info.get("type") == "page":  # a portal or the like: not ours to run
                self.popups += 1
                self.connection.notify("Target.closeTarget", {"targetId": info.get("targetId")})
            else:
                self._child(child, info.get("type"))
        elif method == "Network.webSocketCreated":  # not paused by Fetch: expected as it is made
            url = params.get("url", "")
            if url.split(":", 1)[0].lower() in ("ws", "wss"):
                _expect(self.egress, url)
        elif method == "Inspector.targetCrashed" and session == self.session:
            self.crashed = True

    def _paused(self, session: str, params: dict) -> None:
        request_id = params.get("requestId")
        if "responseStatusCode" in params or "responseErrorReason" in params:
            self._response(session, request_id, params)
            return
        url = params.get("request", {}).get("url", "")
        scheme = url.split(":", 1)[0].lower()
        if scheme not in OUTGOING_SCHEMES:
            if len(self.refused_schemes) < 10:
                self.refused_schemes.append(url[:80])
            self._fail(session, request_id, "AccessDenied")
            return
        self.requests += 1
        if self.requests > self.settings.render_max_requests:
            self.over_requests = True
            self._fail(session, request_id, "BlockedByClient")
            return
        if params.get("resourceType") == "Document" and params.get("frameId") == self.target:
            self._spawn(self._top_document(session, request_id, url))
            return
        self._continue(session, request_id, url)

    def _response(self, session: str, request_id: str | None, params: dict) -> None:
        """A document's response, held before the browser acts on it. The top document is rendered because
        a plain read found it an HTML page; sent with a generic type (application/octet-stream), which the
        plain read sniffs and the browser would take for a download, it is given the type the read settled on."""
        headers = params.get("responseHeaders") or []
        # Only the document the read came for (not yet committed: a later move of the page to a file is a
        # download, refused as ever), and not one sent as an attachment.
        if params.get("frameId") == self.target and "responseStatusCode" in params and not self.committed:
            said = {h.get("name", "").lower(): h.get("value", "") for h in headers}
            if (media_type(said.get("content-type")) in GENERIC_TYPES
                    and not said.get("content-disposition", "").strip().lower().startswith("attachment")):
                kept = [h for h in headers if h.get("name", "").lower() not in _RETYPED_HEADERS]
                self._spawn(self._as_html(session, request_id, params["responseStatusCode"], kept))
                return
        self.connection.notify("Fetch.continueRequest", {"requestId": request_id}, session=session)

    async def _as_html(self, session: str, request_id: str | None, status: int, headers: list[dict]) -> None:
        """The held response handed to the browser as text/html (its body as received: a new type alone, by
        Fetch.continueResponse, does not undo the browser's decision to download it)."""
        try:
            body = await self._send("Fetch.getResponseBody", {"requestId": request_id}, session=session)
            data = body.get("body", "")
            if not body.get("base64Encoded"):
                data = base64.b64encode(data.encode("utf-8")).decode("ascii")
            await self._send("Fetch.fulfillRequest", {
                "requestId": request_id, "responseCode": status, "body": data,
                "responseHeaders": [*headers, {"name": "Content-Type", "value": "text/html"}]}, session=session)
        except (RenderFailed, BrowserHung, BrowserGone):
            self._fail(session, request_id, "Failed")

    def _continue(self, session: str, request_id: str, url: str) -> None:
        """Let a request of the page go: its host and port are then expected at the egress."""
        _expect(self.egress, url)
        self.connection.notify("Fetch.continueRequest", {"requestId": request_id}, session=session)

    async def _top_document(self, session: str, request_id: str, url: str) -> None:
        """The top document and its redirects: the address rules and robots.txt, as a plain read has them."""
        try:
            target = self.renderer.check(url)
            if self.robots is not None:
                await self.robots(target, self.cap)
        except FetchError as exc:
            if not self.committed and self.refusal is None:
                self.refusal = exc
            elif len(self.moves_refused) < 5:
                self.moves_refused.append(f"{url[:200]} ({exc.message[:200]})")
            self._fail(session, request_id, "Aborted")  # Aborted: the current document stays, no error page
            return
        self._continue(session, request_id, url)

    def _fail(self, session: str, request_id: str | None, reason: str) -> None:
        self.connection.notify("Fetch.failRequest", {"requestId": request_id, "errorReason": reason}, session=session)


# Headers of a held response that its handing over as HTML replaces or that no longer hold: its type, a
# download's disposition, and the framing of a body the browser gets decoded and whole.
_RETYPED_HEADERS = frozenset({"content-type", "content-disposition", "content-encoding", "content-length",
                              "transfer-encoding"})


def _retrieved(task: asyncio.Task) -> None:
    if not task.cancelled():
        task.exception()


def _expect(egress: ReadEgress, url: str) -> None:
    try:
        parts = urlsplit(url)
        host, port = parts.hostname, parts.port
    except ValueError:
        return
    if host:
        default = 443 if parts.scheme.lower() in ("https", "wss") else 80
        egress.expect(host, port or default)
