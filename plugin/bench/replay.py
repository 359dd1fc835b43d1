"""Recorded engine exchanges: vcrpy cassettes written while recording, read while replaying.

A cassette holds one query's exchanges with every engine, in vcrpy's format
(`vcr.serialize`), with metadata: the query, the moment it was recorded (so
relative dates replay identically) and each engine's status. Replay matches an
interaction by engine host, query text and vertical (web or news), not by the
exact URL, so a parameter tweak does not orphan a recording. Stored requests
carry no API key, cookie or auth header.
"""

from __future__ import annotations

import json
import os
import re
import tempfile
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Iterable
from urllib.parse import parse_qsl, urlsplit

from engines import ENGINES
from engines.base import Headers, Request, Response
from plugin.infra.charset import decode_body
from plugin.pipeline.canonical import host_of
from plugin.settings import Settings
from plugin.infra.secrets import MIN_SECRET_CHARS, redact
from plugin.infra.transport import Transport, TransportError

# Parameters that carry the query text, across engines.
_QUERY_KEYS = ("q", "p", "wd", "query", "srsearch", "word")
# How engines ask their news vertical instead of web search: a parameter (SearXNG `categories`, Baidu `tn`) or a
# JSON field (Tavily `topic`, Exa `category`) saying news, or a path with a news segment (Brave's API, Serper).
_VERTICAL_KEYS = ("categories", "tn", "topic", "category")
_NEWS_PATH = re.compile(r"/news(/|$)", re.I)
_SECRET_HEADER = re.compile(r"(auth|token|key|cookie|secret|session)", re.I)
REDACTED = "REDACTED"  # what stands for a secret in a recording
ENGINE_HEADER = "X-Metasearch-Engine"


def _scrub(text: str, secrets: Iterable[str]) -> str:
    return redact(text, secrets, REDACTED)


class CassetteError(ValueError):
    """A file that is not a cassette we can replay."""


def _with_body(part: dict) -> dict:
    """A recorded request or response with its body as vcrpy stores it: recorders that keep a JSON body
    parsed (`parsed_body`) get it serialised back."""
    if not isinstance(part, dict) or "parsed_body" not in part:
        return part
    part = dict(part)
    body = json.dumps(part.pop("parsed_body"), ensure_ascii=False).encode("utf-8")
    part["body"] = body if "method" in part else {"string": body}
    return part


def same_query(text: str) -> str:
    """Query text as replay compares it: case and spacing do not matter ("hello" finds "Hello")."""
    return " ".join(text.split()).casefold()


# The engine name page reads go out under (plugin.reading.hops.PAGE_UPSTREAM): their recorded exchanges.
PAGE_ENGINE = "page"


def no_recordings(folder: str | Path, subfolders: bool = False) -> str:
    """The one line saying a folder holds nothing to replay, and what to do about it (commands that exist)."""
    return (f"no recordings in {folder}{' or its subfolders' if subfolders else ''}: record them with `python scripts/bench.py --record` "
            f"(needs network access), or replay the real-page corpus with "
            f"`python scripts/bench.py --corpus ../shared/serp-corpus`")


class NotRecorded(TransportError):
    """Replay has no exchange for this engine and query (`asked`: the query text the engine was sent, which
    recordings are looked up by), or (`page`) no copy of a page a read asked for: a replay never reads the
    network instead."""

    def __init__(self, engine: str, asked: str = "", page: str | None = None):
        if page is None:
            super().__init__("skipped", "no recording for this engine and query")
        else:
            super().__init__("error", f"a replay reads nothing from the network, and the recordings hold no copy of "
                                      f"{page[:200]}", reason="not_recorded")
        self.engine = engine
        self.asked = asked


def _fields(uri: str, body: bytes | str | None) -> tuple[dict, dict]:
    """An exchange's URL parameters, and its body's fields (a JSON object's, else a form's)."""
    params = dict(parse_qsl(urlsplit(uri).query, keep_blank_values=True))
    if not body:
        return params, {}
    text = body.decode("utf-8", "replace") if isinstance(body, bytes) else body
    if text.strip().startswith("{"):
        try:
            data = json.loads(text)
        except ValueError:
            data = None
        if isinstance(data, dict):
            return params, data
    return params, dict(parse_qsl(text, keep_blank_values=True))


def query_text(uri: str, body: bytes | str | None) -> str:
    """The query an exchange was about, from its URL, form body or JSON body."""
    params, fields = _fields(uri, body)
    for found in (params, fields):
        for key in _QUERY_KEYS:
            if isinstance(found.get(key), str) and found[key]:
                return found[key].strip()
    return ""


def vertical(uri: str, body: bytes | str | None) -> str:
    """"news" when an exchange asked an engine's news vertical, else "web": the two share the engine's host and
    the query text, and a news search answered from a web recording would replay web rows as news."""
    if _NEWS_PATH.search(urlsplit(uri).path):
        return "news"
    params, fields = _fields(uri, body)
    return "news" if any(found.get(key) == "news" for found in (params, fields) for key in _VERTICAL_KEYS) else "web"


def request_body(request: Request) -> bytes | None:
    from urllib.parse import urlencode

    if request.form is not None:
        return urlencode(list(request.form)).encode()
    if request.json is not None:
        return json.dumps(request.json, ensure_ascii=False, sort_keys=True).encode()
    return None


def full_url(request: Request) -> str:
    from urllib.parse import urlencode

    if not request.params:
        return request.url
    joiner = "&" if "?" in request.url else "?"
    return request.url + joiner + urlencode(list(request.params))



@dataclass
class Exchange:
    """One request and what came back, ready to store or to replay."""

    engine: str
    method: str
    uri: str
    body: bytes | None
    request_headers: dict[str, str]
    status: int
    response_headers: dict[str, str]
    response_body: bytes
    final_url: str

    @property
    def key(self) -> tuple[str, str, str]:
        return host_of(self.uri), same_query(query_text(self.uri, self.body)), vertical(self.uri, self.body)

    def response(self) -> Response:
        headers = Headers(self.response_headers)
        text, _ = decode_body(self.response_body, headers.get("content-type"))
        return Response(status=self.status, url=self.final_url, headers=headers, body=self.response_body,
                        text=text)


@dataclass
class Cassette:
    query: str
    recorded_at: datetime
    exchanges: list[Exchange] = field(default_factory=list)
    statuses: dict[str, str] = field(default_factory=dict)
    query_id: str | None = None

    # ----- vcrpy format -----
    def dumps(self) -> str:
        from vcr.request import Request as VcrRequest
        from vcr.serialize import serialize
        from vcr.serializers import yamlserializer

        requests, responses = [], []
        for ex in self.exchanges:
            headers = {k: [v] for k, v in ex.request_headers.items()}
            headers[ENGINE_HEADER] = [ex.engine]
            requests.append(VcrRequest(ex.method, ex.uri, ex.body, headers))
            response_headers = {k: [v] for k, v in ex.response_headers.items()}
            response_headers["X-Metasearch-Final-Url"] = [ex.final_url]
            responses.append({"status": {"code": ex.status, "message": ""}, "headers": response_headers,
                              "body": {"string": ex.response_body}})
        metadata = {"query": self.query, "query_id": self.query_id, "recorded_at": self.recorded_at.isoformat(),
                    "engines": self.statuses}
        return serialize({"requests": requests, "responses": responses, "metadata": metadata}, yamlserializer)

    @classmethod
    def loads(cls, text: str) -> "Cassette":
        """A cassette from vcrpy's YAML: ours, any vcrpy recorder's, or the variant that stores JSON bodies
        parsed (`parsed_body`, as pydantic-ai's recorder writes them). CassetteError when it is none."""
        from vcr.request import Request as VcrRequest
        from vcr.serializers import compat, yamlserializer

        try:
            data = yamlserializer.deserialize(text)
        except Exception as exc:  # YAML errors, unknown tags
            reason = " ".join(str(exc).split())[:200]
            raise CassetteError(f"not readable as YAML ({type(exc).__name__}: {reason})") from None
        if not isinstance(data, dict) or not isinstance(data.get("interactions"), list):
            raise CassetteError("not a vcrpy cassette (no interactions list)")
        metadata = data.get("metadata") if isinstance(data.get("metadata"), dict) else {}
        exchanges = []
        for number, interaction in enumerate(data["interactions"], start=1):
            try:
                raw_request, raw_response = _with_body(interaction["request"]), _with_body(interaction["response"])
                request = VcrRequest(raw_request["method"], raw_request["uri"], raw_request.get("body"),
                                     raw_request.get("headers") or {})
                response = compat.convert_to_bytes(raw_response)
                status = int(response["status"]["code"])
            except (KeyError, TypeError, ValueError, AttributeError) as exc:
                raise CassetteError(f"interaction {number} is not a request and a response "
                                    f"({type(exc).__name__}: {exc})") from None
            req_headers = {k: (v[0] if isinstance(v, list) else v) for k, v in dict(request.headers).items()}
            engine = req_headers.pop(ENGINE_HEADER, "") or _engine_for_host(host_of(request.uri))
            resp_headers = {k: (v[0] if isinstance(v, list) else v)
                            for k, v in (response.get("headers") or {}).items()}
            final_url = resp_headers.pop("X-Metasearch-Final-Url", request.uri)
            body = request.body
            if isinstance(body, str):
                body = body.encode()
            response_body = (response.get("body") or {}).get("string", b"") or b""
            if isinstance(response_body, str):
                response_body = response_body.encode()
            exchanges.append(Exchange(
                engine=engine, method=request.method, uri=request.uri, body=body, request_headers=req_headers,
                status=status, response_headers=resp_headers, response_body=response_body, final_url=final_url))
        recorded = metadata.get("recorded_at")
        return cls(query=metadata.get("query", ""), recorded_at=datetime.fromisoformat(recorded) if recorded
                   else datetime.now(), exchanges=exchanges, statuses=metadata.get("engines", {}),
                   query_id=metadata.get("query_id"))

    def write(self, path: Path) -> None:
        """Write atomically: a reader sees the old cassette or the new one, never half of one."""
        path.parent.mkdir(parents=True, exist_ok=True)
        data = self.dumps()
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                handle.write(data)
                handle.flush()
                os.fsync(handle.fileno())
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise

    @classmethod
    def read(cls, path: Path) -> "Cassette":
        return cls.loads(path.read_text(encoding="utf-8"))


def _engine_for_host(host: str) -> str:
    """The engine whose requests go to `host` (for cassettes recorded without our engine header)."""
    from engines.base import SearchOptions

    probe = SearchOptions(api_key="probe", base_url="https://searxng.invalid")
    for name, engine in ENGINES.items():
        try:
            if host_of(engine.build("x", probe).url) == host:
                return name
        except Exception:  # an engine that cannot build without more configuration
            continue
    return ""


def cassette_name(query_id: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", query_id).strip("-") + ".yaml"


class Recordings:
    """An index of recorded exchanges: (engine host, query text, vertical) -> exchanges in recording order."""

    def __init__(self, cassettes: Iterable[Cassette] = ()):
        self.cassettes = list(cassettes)
        self.skipped: list[str] = []  # files from_dir could not read, with why
        self._index: dict[tuple[str, str, str], list[Exchange]] = {}
        self._by_engine_host: dict[str, list[Exchange]] = {}
        for cassette in self.cassettes:
            for exchange in cassette.exchanges:
                self._index.setdefault(exchange.key, []).append(exchange)
                self._by_engine_host.setdefault(host_of(exchange.uri), []).append(exchange)

    @classmethod
    def from_dir(cls, directory: str | Path) -> "Recordings":
        """Every cassette (`*.yaml`, `*.yml`) in `directory` and its subfolders one level down (a corpus keeps
        one folder per engine); files that are not cassettes we can replay are left out and named in
        `skipped`, so one odd file does not stop the others."""
        folder = Path(directory)
        if not folder.is_dir():
            raise FileNotFoundError(f"replay directory {folder} does not exist")
        cassettes, skipped = [], []
        for pattern in ("*.yaml", "*.yml", "*/*.yaml", "*/*.yml"):
            for path in sorted(folder.glob(pattern)):
                try:
                    cassettes.append(Cassette.read(path))
                except (CassetteError, OSError, UnicodeDecodeError) as exc:
                    skipped.append(f"{path.relative_to(folder)}: {exc}")
        recordings = cls(cassettes)
        recordings.skipped = skipped
        return recordings

    def find_page(self, url: str) -> Exchange | None:
        """A page read's recorded exchange (engine `page`), by its exact URL."""
        return next((ex for cassette in self.cassettes for ex in cassette.exchanges
                     if ex.engine == PAGE_ENGINE and ex.uri == url), None)

    def find(self, request: Request, engine: str, used: dict[tuple[str, str, str], int]) -> Exchange | None:
        url, body = full_url(request), request_body(request)
        key = (host_of(request.url), same_query(query_text(url, body)), vertical(url, body))
        candidates = self._index.get(key)
        if not candidates and not key[1]:
            # A request without query text (e.g. Startpage's home page): any recording on that host.
            candidates = [ex for ex in self._by_engine_host.get(key[0], []) if not ex.key[1]]
        if not candidates:
            return None
        index = used.get(key, 0)
        used[key] = index + 1
        return candidates[min(index, len(candidates) - 1)]

    def engines(self) -> set[str]:
        return {ex.engine for cassette in self.cassettes for ex in cassette.exchanges}

    def recorded_at(self, query: str) -> datetime | None:
        for cassette in self.cassettes:
            if cassette.query and same_query(cassette.query) == same_query(query):
                return cassette.recorded_at
        return None

    def queries(self, vertical: str | None = None) -> list[str]:
        """Every query text recorded (as the engines were asked it; of `vertical` only, when given), for
        telling a caller what there is."""
        return sorted({ex.key[1] for cassette in self.cassettes for ex in cassette.exchanges
                       if ex.key[1] and vertical in (None, ex.key[2])})


class ReplayTransport(Transport):
    """Answers from recordings instead of the network; an unrecorded exchange is reported, never fetched.
    As a page reader's transport (engine `page`), it answers a read from a recorded copy of the page or
    refuses it (`missed` keeps the query texts that found no recording, for the caller to explain)."""

    def __init__(self, settings: Settings, recordings: Recordings | str | Path):
        super().__init__(settings)
        self.recordings = recordings if isinstance(recordings, Recordings) else Recordings.from_dir(recordings)
        self._used: dict[tuple[str, str, str], int] = {}
        self.missed: dict[str, str] = {}  # engine -> the query text it was sent, where nothing was recorded

    async def fetch(self, request: Request, engine: str, deadline, cookies: dict[str, str] | None = None,
                    **_: object) -> Response:
        if engine == PAGE_ENGINE:
            recorded = self.recordings.find_page(request.url)
            if recorded is None:
                raise NotRecorded(engine, page=request.url)
            return recorded.response()
        exchange = self.recordings.find(request, engine, self._used)
        if exchange is None:
            asked = query_text(full_url(request), request_body(request))
            self.missed[engine] = asked
            raise NotRecorded(engine, asked)
        return exchange.response()

    async def close(self) -> None:
        return None


class RecordingTransport(Transport):
    """The real transport, keeping a scrubbed copy of every exchange it performs."""

    def __init__(self, settings: Settings, secrets: Iterable[str] = ()):
        super().__init__(settings)
        self.exchanges: list[Exchange] = []
        self.secrets = [s for s in secrets if s]

    async def fetch(self, request: Request, engine: str, deadline: float,
                    cookies: dict[str, str] | None = None) -> Response:
        response = await super().fetch(request, engine, deadline, cookies)
        secrets = [*self.secrets, *request.secrets]
        body = request_body(request)
        headers = {k: v for k, v in request.headers.items() if not _SECRET_HEADER.search(k)}
        response_headers = {str(k): v for k, v in response.headers.items()  # plain str, not multidict's istr
                            if not _SECRET_HEADER.search(k) and k.lower() not in ("content-encoding",
                                                                                   "transfer-encoding",
                                                                                   "content-length")}
        response_body = response.body
        for secret in secrets:
            if secret and len(secret) >= MIN_SECRET_CHARS and secret.encode() in response_body:
                response_body = response_body.replace(secret.encode(), REDACTED.encode())
        self.exchanges.append(Exchange(
            engine=engine,
            method=request.method,
            uri=_scrub(full_url(request), secrets),
            body=_scrub(body.decode("utf-8", "replace"), secrets).encode() if body else None,
            request_headers={k: _scrub(v, secrets) for k, v in headers.items()},
            status=response.status,
            response_headers={k: _scrub(v, secrets) for k, v in response_headers.items()},
            response_body=response_body,
            final_url=_scrub(response.url, secrets),
        ))
        return response

    def take(self, engine: str | None = None) -> list[Exchange]:
        """Remove and return the exchanges recorded so far (of one engine, or all)."""
        taken = [ex for ex in self.exchanges if engine is None or ex.engine == engine]
        self.exchanges = [ex for ex in self.exchanges if not (engine is None or ex.engine == engine)]
        return taken
