"""`metasearch serve`: one shared search pool over HTTP for many agents.

GET /search?q=...  -> SearchResponse JSON; every parameter is listed by `search_parameters()` (the
    web_search tool's arguments plus q and no_cache) and in the README; any other is refused (400,
    invalid_parameter), so a misspelt `lmit=3` is not silently ignored
GET /fetch?url=&max_chars=&offset=&format=markdown|text&query=&passages=&max_tokens=&render=auto|always|never
    -> FetchResponse JSON
    (errors: 400, 403, 502, 504); with query, the passages that answer it; its parameters are the web_fetch
    tool's (`fetch_parameters()`), any other is refused as well
GET /verify?url=&quote=&format= -> VerifyResponse JSON: whether the quote occurs in the page, and where
A parameter given twice (the list ones excepted), or as both `q` and `query`, is refused too, on every path.
GET /health  -> {"status": "ok", ...}
Any other path is 404, another method 405, an address over MAX_URL_CHARS 414, each with the JSON error body.
GET /metrics -> Prometheus text format: searches, fetches and verifies by outcome, with their durations
HEAD on /search, /fetch and /verify answers the headers GET would (200 and Content-Type, or the 400 of
parameters GET would refuse) without searching, reading or checking anything (`head_handler`).

A request whose Host is not a name the server listens on is refused (421), and one whose Origin (when
sent) is not, 403, as the MCP SDK's streamable HTTP transport does: a page on another site whose name
was rebound to 127.0.0.1 (DNS rebinding) cannot use a local `serve` as a relay to search, read pages or
read the metrics. `allowed_hosts` (METASEARCH_ALLOWED_HOSTS) adds names, such as a reverse proxy's.

`--workers N` (setting `workers`) runs N processes accepting on one listening socket, so a service
uses the machine's cores (one event loop is one core). They share cooldowns, the cache and budgets
through the state store (SQLite or Redis) as separate CLI processes do; /metrics adds up every worker.
"""

from __future__ import annotations

import functools
import json
import os
import re
from pathlib import Path
from typing import Sequence

from aiohttp import web

from plugin.errors import SearchError, unknown_arguments
from plugin.infra.logs import get_logger
from plugin.infra.metrics import Metrics
from plugin.infra import memo
from plugin.pipeline.searcher import Searcher
from plugin.settings import Settings
from plugin.version import VERSION

log = get_logger("metasearch.service")

SEARCHER = web.AppKey("searcher", Searcher)
METRICS = web.AppKey("metrics", Metrics)
# Where the workers of one `serve --workers N` leave their counts for each other's /metrics.
SHARED_METRICS = web.AppKey("shared_metrics", Path)
SNAPSHOT_EVERY_S = 1.0
RESTARTS_ALLOWED = 10


LIST_PARAMETERS = ("engines", "allowed_domains", "blocked_domains")  # comma-separated or repeated


def search_parameters() -> dict[str, str]:
    """Every query parameter of GET /search with what it means: the web_search tool's arguments (their
    descriptions come from its schema) plus the HTTP-only `q` and `no_cache`."""
    from plugin.surfaces.schemas import WebSearchArgs

    parameters = {"q": "What to search for (1-500 characters); `query` is the same."}
    for name, field in WebSearchArgs.model_fields.items():
        parameters[name] = "Same as q." if name == "query" else (field.description or "")
        if name in LIST_PARAMETERS:
            parameters[name] += " Comma-separated, or the parameter repeated."
    parameters["no_cache"] = ("1, true, yes or on: ask every engine again instead of using the answer cache "
                              "(0, false, no or off: use it, the default).")
    return parameters


def fetch_parameters() -> dict[str, str]:
    """Every query parameter of GET /fetch: the web_fetch tool's arguments, descriptions from its schema."""
    from plugin.surfaces.schemas import WebFetchArgs

    return {name: field.description or "" for name, field in WebFetchArgs.model_fields.items()}


def verify_parameters() -> dict[str, str]:
    """Every query parameter of GET /verify: the web_verify tool's arguments, descriptions from its schema."""
    from plugin.surfaces.schemas import WebVerifyArgs

    return {name: field.description or "" for name, field in WebVerifyArgs.model_fields.items()}


@memo.register
@functools.cache
def _known_parameters(path: str) -> tuple[str, ...]:
    """The names GET /search, /fetch or /verify takes, worked out once (the tool schemas do not change at
    run time)."""
    return tuple({"/search": search_parameters, "/fetch": fetch_parameters, "/verify": verify_parameters}[path]())


SAME_PARAMETER = {"query": "q"}  # /search takes `query` as another spelling of `q`, never both
TRUE_WORDS, FALSE_WORDS = ("1", "true", "yes", "on"), ("0", "false", "no", "off")


def undecodable_parameters(path: str, raw_query: str) -> SearchError | None:
    """invalid_parameter for a query string whose percent-escapes are not UTF-8 (`q=caf%E9`, Latin-1):
    decoded as they are, each bad byte would become U+FFFD and the engines be asked for `caf\ufffd`, a
    search nobody made, answered 200 as if it were."""
    from urllib.parse import unquote_to_bytes

    for piece in raw_query.split("&"):
        name, _, value = piece.partition("=")
        for part in (name, value):
            try:
                unquote_to_bytes(part.replace("+", " ")).decode("utf-8")
            except UnicodeDecodeError:
                shown = unquote_to_bytes(name.replace("+", " ")).decode("utf-8", "replace")[:40]
                return SearchError("invalid_parameter", f"{path}: {shown or 'a parameter'} is not UTF-8 once its "
                                   "%-escapes are decoded; percent-encode the UTF-8 bytes of the text "
                                   "(caf%C3%A9, not caf%E9)", parameter=shown)
    return None


def refused_parameters(request: web.Request) -> SearchError | None:
    """invalid_parameter for a query string the request's path cannot take as meant: an unknown name (a misspelt
    `lmit=3`, `/fetch?max_char=100`), a name given twice (`q=x&q=y`; the list parameters excepted) or
    under both its spellings (`q=A&query=B`), a boolean that is no yes or no (`no_cache=maybe`). Each
    would otherwise be silently ignored or half used; so would a value not in UTF-8 (in the query string
    as sent)."""
    path, args = request.path, request.query
    problem = undecodable_parameters(path, request.rel_url.raw_query_string)
    if problem is not None:
        return problem
    names = [name for name, _ in args.items()]  # a name given twice is listed twice (keys() lists it once)
    problem = unknown_arguments(path, names, _known_parameters(path))
    if problem is not None:
        return problem
    twice = [name for name in dict.fromkeys(names) if names.count(name) > 1 and name not in LIST_PARAMETERS]
    if twice:
        return SearchError("invalid_parameter", f"{path} got {', '.join(twice)} more than once; give each once "
                           f"(only {', '.join(LIST_PARAMETERS)} may be repeated)", parameter=twice)
    for alias, name in SAME_PARAMETER.items():
        if alias in args and name in args:
            return SearchError("invalid_parameter", f"{path} got both {name} and {alias}, which are the same "
                               f"parameter; give one", parameter=[name, alias])
    if "no_cache" in args and args["no_cache"].strip().lower() not in TRUE_WORDS + FALSE_WORDS:
        return SearchError("invalid_parameter", f"no_cache must be one of {', '.join(TRUE_WORDS + FALSE_WORDS)}, "
                           f"got {args['no_cache'][:40]!r}", parameter="no_cache")
    return None


async def search_handler(request: web.Request) -> web.Response:
    searcher = request.app[SEARCHER]
    metrics = request.app[METRICS]
    args = request.query
    problem = refused_parameters(request)
    if problem is not None:
        metrics.bad_input()
        return web.json_response(problem.to_dict(), status=400)
    engines = ",".join(args.getall("engines")) if "engines" in args else None
    try:
        response = await searcher.search(
            args.get("q", args.get("query")), limit=args.get("limit"), engines=engines,
            region=args.get("region"), time_range=args.get("time_range"), site=args.get("site"),
            safesearch=args.get("safesearch"),
            cache=args.get("no_cache", "").strip().lower() not in TRUE_WORDS,
            allowed_domains=args.getall("allowed_domains", None), blocked_domains=args.getall("blocked_domains", None),
            category=args.get("category"), page=args.get("page"), user_location=args.get("user_location"),
            read=args.get("read"), passages=args.get("passages"), max_tokens=args.get("max_tokens"),
            render=args.get("render"))
    except SearchError as exc:
        metrics.bad_input()
        return web.json_response(exc.to_dict(), status=400)
    metrics.observe(response)
    return web.Response(text=response.model_dump_json(), content_type="application/json")


def _count(request: web.Request, kind: str, exc: SearchError, started: float) -> None:
    """A fetch or verify that ended in an error, counted for /metrics: bad_input (400), or the code of a
    page that could not be had (403, 502, 503, 504) with the time it took."""
    import time

    from plugin.errors import FetchError

    metrics = request.app[METRICS]
    count = metrics.fetched if kind == "fetch" else metrics.verified
    if isinstance(exc, FetchError) and not exc.bad_input:
        count(exc.code, time.perf_counter() - started)
    else:
        count("bad_input")


async def fetch_handler(request: web.Request) -> web.Response:
    import time

    from plugin.errors import FetchError

    args = request.query
    problem = refused_parameters(request)
    if problem is not None:
        request.app[METRICS].fetched("bad_input")
        return web.json_response(problem.to_dict(), status=400)
    started = time.perf_counter()
    try:
        response = await request.app[SEARCHER].page_reader().fetch(
            args.get("url"), max_chars=args.get("max_chars"), offset=args.get("offset"), format=args.get("format"),
            query=args.get("query"), passages=args.get("passages"), max_tokens=args.get("max_tokens"),
            render=args.get("render"))
    except FetchError as exc:  # bad input 400; refused 403; the page's fault 502; too slow 504
        _count(request, "fetch", exc, started)
        return web.json_response(exc.to_dict(), status=exc.http_status)
    except SearchError as exc:
        _count(request, "fetch", exc, started)
        return web.json_response(exc.to_dict(), status=400)
    request.app[METRICS].fetched("cached" if response.cached else "ok", time.perf_counter() - started)
    return web.Response(text=response.model_dump_json(), content_type="application/json")


HEALTH_PROBE_S = 2.0  # longest /health waits for the state store to answer its probe


async def head_handler(request: web.Request) -> web.Response:
    """HEAD /search, /fetch, /verify: the status and headers GET would send, and nothing run. HEAD is a
    safe method (RFC 9110, 9.3.2) that link checkers, uptime probes and `curl -I` send to see whether a
    URL answers: answered by running the handler (aiohttp's default), each probe started every engine
    (or read a page) and spent their quotas for a body nobody reads; a 405 would tell the probe the
    service is down. Parameters GET would refuse are refused alike (400); Content-Length, known only
    once the answer is made, is left out, as the RFC allows."""
    problem = refused_parameters(request)
    if problem is not None:
        return web.json_response(problem.to_dict(), status=400)  # the body is dropped for HEAD
    return web.Response(status=200, content_type="application/json")


async def verify_handler(request: web.Request) -> web.Response:
    """GET /verify?url=&quote=&format=: plugin.reading.verify through the service's page reader."""
    import time

    from plugin.errors import FetchError
    from plugin.reading.verify import verify_with

    args = request.query
    # unknown, misspelt or repeated, as /search and /fetch
    problem = refused_parameters(request)
    if problem is not None:
        request.app[METRICS].verified("bad_input")
        return web.json_response(problem.to_dict(), status=400)
    started = time.perf_counter()
    try:
        response = await verify_with(request.app[SEARCHER].page_reader(), args.get("url"), args.get("quote"),
                                     format=args.get("format"))
    except FetchError as exc:
        _count(request, "verify", exc, started)
        return web.json_response(exc.to_dict(), status=exc.http_status)
    except SearchError as exc:
        _count(request, "verify", exc, started)
        return web.json_response(exc.to_dict(), status=400)
    request.app[METRICS].verified("found" if response.found else "not_found", time.perf_counter() - started)
    return web.Response(text=response.model_dump_json(), content_type="application/json")


async def health_handler(request: web.Request) -> web.Response:
    """Alive, and what the state store is doing: one read probes it, so a Redis that went down since the
    last search is in `warnings` (the store's own fallback notices it and says so)."""
    import asyncio

    searcher = request.app[SEARCHER]
    problems = []
    try:
        await asyncio.wait_for(searcher.state.cache_get("health:probe"), HEALTH_PROBE_S)
    except Exception as exc:  # noqa: BLE001 - whatever the store does, /health answers and says it
        problems.append(f"state store did not answer a read within {HEALTH_PROBE_S:.0f} s: {type(exc).__name__}")
    from plugin.infra.state import state_usage

    usage = await state_usage(searcher.state, HEALTH_PROBE_S)  # how full the store's cache is
    return web.json_response({"status": "ok", "version": VERSION, "state": searcher.state.backend,
                              "state_store": usage,
                              "warnings": [*searcher.settings.warnings, *searcher.state.warnings, *problems],
                              "pid": os.getpid()})


async def metrics_handler(request: web.Request) -> web.Response:
    metrics = request.app[METRICS]
    shared = request.app.get(SHARED_METRICS)
    if shared is not None:  # one of several workers: add up the others' latest counts
        metrics = metrics.merged(_other_snapshots(shared))
    return web.Response(text=metrics.render(), content_type="text/plain",
                        headers={"X-Content-Type-Options": "nosniff"})


def _other_snapshots(shared: Path) -> list[dict]:
    found = []
    for path in shared.glob("*.json"):
        if path.stem == str(os.getpid()):
            continue
        try:
            found.append(json.loads(path.read_text()))
        except (OSError, ValueError):  # a worker gone, or a file being replaced
            continue
    return found


class HostGuard:
    """Which Host and Origin headers a server listening on `host` answers (DNS-rebinding protection, as
    the MCP SDK's HTTP transport has it): the names it listens on, any port; the loopback names when it
    listens on loopback; any IP literal and the machine's own names when it listens on every interface
    (a rebinding page always comes by a name of its own); and `allowed` (name or name:port; '*': any)."""

    _SPLIT = re.compile(r"^(?:\[(?P<v6>[^\]]*)\]|(?P<name>[^:]*))(?::(?P<port>\d{1,5}))?$")

    def __init__(self, host: str, allowed: Sequence[str] = ()):
        import socket

        listen = host.strip().strip("[]").lower().rstrip(".")
        self.open = "*" in allowed
        self.every_interface = listen in ("", "0.0.0.0", "::")
        self.names: set[str] = {listen}
        if self.every_interface or _loopback(listen):
            self.names |= {"localhost", "127.0.0.1", "::1"}
        if self.every_interface:
            self.names |= {socket.gethostname().lower(), socket.getfqdn().lower()}
        self.with_port: set[tuple[str, str]] = set()
        for entry in allowed:
            parts = self._split(entry)
            if parts is not None and parts[1]:
                self.with_port.add(parts)
            elif parts is not None:
                self.names.add(parts[0])

    def _split(self, value: str) -> tuple[str, str] | None:
        found = self._SPLIT.match(value.strip())
        if found is None:
            return None
        return (found.group("v6") or found.group("name") or "").lower().rstrip("."), found.group("port") or ""

    def allows_host(self, header: str | None, literals: bool = True) -> bool:
        if self.open:
            return True
        parts = self._split(header or "")
        if parts is None or not parts[0]:
            return False
        name, port = parts
        if name in self.names or (name, port) in self.with_port:
            return True
        return literals and self.every_interface and _ip_literal(name)

    def allows_origin(self, origin: str | None, host: str | None = None) -> bool:
        """An Origin header (absent: a request that is not a browser's cross-site one) from an allowed host.
        On every interface any IP address is a Host the server answers, but not an Origin: a page served
        from http://203.0.113.5/ (or a LAN device's page) is another site, unless it is this server's
        own origin (the request's `host`)."""
        if origin is None or self.open:
            return True
        scheme, sep, rest = origin.partition("://")
        if not sep or scheme.lower() not in ("http", "https") or "/" in rest:
            return False
        if self.allows_host(rest, literals=False):
            return True
        own, other = self._split(rest), self._split(host or "")
        return own is not None and own == other and self.allows_host(host)


def _ip_literal(name: str) -> bool:
    import ipaddress

    try:
        ipaddress.ip_address(name)
    except ValueError:
        return False
    return True


def _loopback(name: str) -> bool:
    import ipaddress

    if name == "localhost":
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


GUARD = web.AppKey("host_guard", HostGuard)


# A browser's request made by a page of another site. Such a request without an Origin header (an <img>,
# a <script>, a link followed, a GET form: browsers send Origin only for CORS requests and non-GET ones)
# would pass the Origin check and run a search or a page read for any page the user has open, spending
# the engines' quotas and API keys: its Sec-Fetch-Site header, which every current browser sends, says
# where it came from. Programs (agents, curl) send none.
CROSS_SITE = ("cross-site", "same-site")


def refusal(guard: HostGuard, host: str | None, origin: str | None, site: str | None) -> tuple[int, dict] | None:
    """The status and error body for a request the guard refuses (by its Host, Origin and Sec-Fetch-Site
    headers), or None: one rule for `serve` and `mcp --http`."""
    if not guard.allows_host(host):
        return 421, {"error": {"code": "host_not_allowed", "message": (
            f"this server does not answer to the host {str(host)[:100]!r} (DNS-rebinding protection); add it "
            "to METASEARCH_ALLOWED_HOSTS (the allowed_hosts setting) if it is yours")}}
    if not guard.allows_origin(origin, host):
        return 403, {"error": {"code": "origin_not_allowed", "message": (
            f"requests from the origin {str(origin)[:100]!r} are refused (a page of another site); add its "
            "host to METASEARCH_ALLOWED_HOSTS (the allowed_hosts setting) if it is yours")}}
    site = (site or "").strip().lower()
    if origin is None and site in CROSS_SITE and not guard.open:
        return 403, {"error": {"code": "origin_not_allowed", "message": (
            f"a request a page of another site made (Sec-Fetch-Site: {site}, no Origin: an image, a link or a "
            "form sent by a browser) is refused; call the service from a program, or from a page whose host "
            "is in METASEARCH_ALLOWED_HOSTS (the allowed_hosts setting) with its Origin")}}
    return None


@web.middleware
async def host_check(request: web.Request, handler) -> web.StreamResponse:
    """421 for a Host the server does not answer to, 403 for a foreign Origin or a request another site's
    page made without one (Sec-Fetch-Site), before anything else runs."""
    refused = refusal(request.app[GUARD], request.headers.get("Host"), request.headers.get("Origin"),
                      request.headers.get("Sec-Fetch-Site"))
    if refused is not None:
        return web.json_response(refused[1], status=refused[0])
    return await handler(request)


# Addresses longer than this are refused with 414 and the JSON error body; the HTTP parser reads lines up
# to PARSER_MAX_LINE, so one between the two reaches us instead of the parser's plain-text 400.
MAX_URL_CHARS = 16384
PARSER_MAX_LINE = 65536
# HTTP-level refusals (no such path, wrong method, address too long), with the body every error has.
HTTP_ERROR_CODES = {404: "not_found", 405: "method_not_allowed", 414: "uri_too_long"}
PATHS = ("/search", "/fetch", "/verify", "/health", "/metrics")


def _json_error(status: int, message: str, headers=None) -> web.Response:
    code = HTTP_ERROR_CODES.get(status, "http_error")
    return web.json_response({"error": {"code": code, "message": message}}, status=status, headers=headers)


@web.middleware
async def json_errors(request: web.Request, handler) -> web.StreamResponse:
    """404, 405 and 414 answer `{"error": {"code", "message"}}` like every other error, not aiohttp's text."""
    if len(request.raw_path) > MAX_URL_CHARS:
        return _json_error(414, f"the address is {len(request.raw_path)} characters long; at most {MAX_URL_CHARS} "
                                "are read")
    try:
        return await handler(request)
    except web.HTTPException as exc:
        if exc.status == 404:
            return _json_error(404, f"nothing at {request.path[:200]}; the paths are {', '.join(PATHS)}")
        if exc.status == 405:
            allowed = exc.headers.get("Allow", "GET")
            return _json_error(405, f"{request.method[:20]} is not allowed on {request.path[:200]}; use {allowed}",
                               headers={"Allow": allowed})
        raise


def build_app(settings: Settings, searcher: Searcher | None = None, shared_metrics: Path | None = None,
              host: str = "127.0.0.1") -> web.Application:
    """The service's application; `host`: the address it listens on, whose names the Host check allows."""
    app = web.Application(middlewares=[host_check, json_errors], handler_args={"max_line_size": PARSER_MAX_LINE})
    app[GUARD] = HostGuard(host, settings.allowed_hosts)
    app[SEARCHER] = searcher or Searcher(settings)
    app[METRICS] = Metrics()
    for path, handler in (("/search", search_handler), ("/fetch", fetch_handler), ("/verify", verify_handler)):
        app.router.add_get(path, handler, allow_head=False)
        app.router.add_route("HEAD", path, head_handler)
    app.router.add_get("/health", health_handler)
    app.router.add_get("/metrics", metrics_handler)
    if shared_metrics is not None:
        app[SHARED_METRICS] = shared_metrics
        app.cleanup_ctx.append(_publish_metrics)

    async def close(app: web.Application) -> None:
        await app[SEARCHER].close()

    app.on_cleanup.append(close)
    return app


async def _publish_metrics(app: web.Application):
    """Write this worker's counts where the other workers read them, every second."""
    import asyncio

    path = app[SHARED_METRICS] / f"{os.getpid()}.json"

    def write() -> None:
        temporary = path.with_suffix(".tmp")
        temporary.write_text(json.dumps(app[METRICS].snapshot()))
        temporary.replace(path)

    async def loop() -> None:
        while True:
            await asyncio.sleep(SNAPSHOT_EVERY_S)
            try:
                write()
            except OSError as exc:
                log.warning("could not share metrics in %s: %s", path.parent, exc)

    task = asyncio.get_running_loop().create_task(loop())
    yield
    task.cancel()
    try:
        await task
    except asyncio.CancelledError:
        pass


def serve(settings: Settings, host: str = "127.0.0.1", port: int = 8080, workers: int | None = None) -> None:
    import logging

    from plugin.infra.logs import configure

    configure(getattr(logging, settings.log.upper(), logging.WARNING))
    workers = workers or settings.workers
    if workers <= 1:
        sock = listen(host, port)
        web.run_app(build_app(settings, host=host), sock=sock, print=None, **run_options(settings))
    else:
        serve_workers(settings, host, port, workers)


def run_options(settings: Settings) -> dict[str, float]:
    """aiohttp's timeouts from the settings. aiohttp has no timeout for reading a request's head, but its
    keep-alive timer, armed when a connection opens and after each answer and not reset by data that
    does not complete a request, closes a connection still without a whole request when it fires: the
    keep-alive timeout bounds a client that sends its headers a byte at a time (75 s by default)."""
    return {"shutdown_timeout": settings.shutdown_wait_ms / 1000, "keepalive_timeout": settings.header_timeout_ms / 1000}


def listen(host: str, port: int, path: str = ""):
    """The listening socket, bound at once (an address in use fails here), and the line saying where
    (`path`: the address a client uses under it, /mcp for `mcp --http`)."""
    import socket
    import sys

    family = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)[0][0]
    sock = socket.create_server((host, port), family=family, backlog=1024)
    bound = sock.getsockname()[1]  # the port the system chose for --port 0
    print(f"listening on http://{f'[{host}]' if ':' in host else host}:{bound}{path}", file=sys.stdout, flush=True)
    return sock


def serve_workers(settings: Settings, host: str, port: int, workers: int) -> None:
    """Bind once, fork `workers` processes that all accept on the socket, and wait for them. A worker
    that dies is replaced (up to RESTARTS_ALLOWED times); SIGINT or SIGTERM stops them all."""
    import shutil
    import signal
    import tempfile

    sock = listen(host, port)  # an address in use fails here, at once
    shared = Path(tempfile.mkdtemp(prefix="metasearch-serve-"))
    children: dict[int, int] = {}
    stopping = False

    def start(index: int) -> None:
        pid = os.fork()
        if pid == 0:  # the worker: its own event loop, searcher and state store, made after the fork
            code = 0
            try:
                signal.signal(signal.SIGTERM, signal.SIG_DFL)
                signal.signal(signal.SIGINT, signal.SIG_DFL)
                web.run_app(build_app(settings, shared_metrics=shared, host=host), sock=sock, print=None,
                            **run_options(settings))
            except BaseException:  # noqa: BLE001 - a worker reports and exits; the parent decides
                log.exception("worker %d failed", index)
                code = 1
            finally:
                os._exit(code)
        children[pid] = index

    def stop(signum=None, frame=None) -> None:
        nonlocal stopping
        stopping = True
        for pid in list(children):
            try:
                os.kill(pid, signal.SIGTERM)
            except ProcessLookupError:
                pass

    for index in range(workers):
        start(index)
    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    restarts = 0
    try:
        while children:
            pid, status = os.wait()
            index = children.pop(pid, None)
            (shared / f"{pid}.json").unlink(missing_ok=True)
            if index is None or stopping:
                continue
            restarts += 1
            log.warning("worker %d (pid %d) exited with status %d; %s", index, pid, os.waitstatus_to_exitcode(status),
                        "restarting it" if restarts <= RESTARTS_ALLOWED else "too many restarts, stopping")
            if restarts <= RESTARTS_ALLOWED:
                start(index)
            else:
                stop()
    finally:
        sock.close()
        shutil.rmtree(shared, ignore_errors=True)
