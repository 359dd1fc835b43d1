"""The `metasearch` command.

Harnesses spawn it once per tool call, so start-up matters: this module
imports only the standard library at load time; the pipeline, pydantic,
aiohttp and the MCP SDK are imported by the subcommands that need them.

Exit status (a contract, documented in the README): 0 rows returned; 1 no results (engines answered,
nothing relevant); 2 bad input; 3 no engine could answer (every selected engine failed, was cooling
down, skipped, queued or disabled); 4 internal error.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from typing import Any, NoReturn, Sequence

EXIT_OK = 0
EXIT_NO_RESULTS = 1
EXIT_BAD_INPUT = 2
EXIT_NO_ENGINE = 3
EXIT_INTERNAL = 4
EXIT_PAGE_UNAVAILABLE = 3  # `metasearch fetch`: the page could not be had (refused, failed, unreadable)


class UsageError(Exception):
    def __init__(self, code: str, message: str):
        super().__init__(message)
        self.code = code
        self.message = message


class _Parser(argparse.ArgumentParser):
    """argparse that reports mistakes as our error codes instead of exiting on its own."""

    def error(self, message: str) -> NoReturn:
        if message.startswith("unrecognized arguments:"):
            message += self._closest_options(message.split(":", 1)[1].split())
        elif (choice := re.search(r"invalid choice: '(.*?)' \(choose from (.*)\)$", message)) is not None:
            import difflib  # `searhc`: did you mean search?

            close = difflib.get_close_matches(choice[1], re.findall(r"'(.*?)'", choice[2]), n=1, cutoff=0.6)
            message += f"; did you mean {close[0]}?" if close else ""
        raise UsageError("invalid_parameter", message)

    argv: Sequence[str] = ()  # the command line being parsed, to tell which subcommand a mistake is in

    def _closest_options(self, given: list[str]) -> str:
        """`; --limt (did you mean --limit?)` for a misspelt option, from the options of the subcommand used."""
        import difflib

        commands = {name: parser for action in self._actions if isinstance(action, argparse._SubParsersAction)
                    for name, parser in action.choices.items()}
        used = next((commands[word] for word in self.argv if word in commands), self)
        known = sorted({o for a in [*used._actions, *self._actions] for o in a.option_strings if o.startswith("--")})
        hints = [f"{word} (did you mean {close[0]}?)" for word in given if word.startswith("--")
                 if (close := difflib.get_close_matches(word.split("=", 1)[0], known, n=1, cutoff=0.75))]
        return f"; {', '.join(hints)}" if hints else ""


def _emit_error(code: str, message: str, as_json: bool, extra: dict[str, Any] | None = None) -> int:
    if code == "internal_error":  # an unexpected message might quote anything, keys included
        from plugin.infra.logs import RedactSecrets
        from plugin.infra.secrets import redact

        message = redact(message, RedactSecrets().values())
    if as_json:
        error: dict[str, Any] = {"code": code, "message": message}
        error.update(extra or {})
        print(json.dumps({"error": error}, ensure_ascii=False))
    else:
        print(f"metasearch: error [{code}]: {message}", file=sys.stderr)
    return EXIT_INTERNAL if code == "internal_error" else EXIT_BAD_INPUT


def search_exit_status(response) -> int:
    """0 rows returned, 1 engines answered but nothing relevant, 3 no engine could answer."""
    from plugin.models import ANSWERED_STATUSES  # loaded already: the response is one of its models

    if response.results:
        return EXIT_OK
    if any(report.status in ANSWERED_STATUSES for report in response.engines):
        return EXIT_NO_RESULTS
    return EXIT_NO_ENGINE


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="metasearch", description="Multi-engine web metasearch for AI agents.")
    parser.add_argument("--version", action="store_true", help="print the version and exit")
    parser.add_argument("--config", metavar="FILE",
                        help="TOML settings file (default $XDG_CONFIG_HOME/metasearch/config.toml)")
    commands = parser.add_subparsers(dest="command", parser_class=_Parser)

    search = commands.add_parser("search", help="search the web")
    search.add_argument("query", nargs="*", help="what to search for")
    search.add_argument("--limit", metavar="N",
                        help="rows to return (1-20, default 8; out-of-range values are clamped)")
    search.add_argument("--engines", metavar="a,b", help="comma-separated engine names (default: every enabled engine)")
    search.add_argument("--endpoint", action="append", metavar="NAME=URL",
                        help="send an engine's requests to this scheme://host:port instead (repeatable)")
    search.add_argument("--timeout-ms", dest="timeout_ms", metavar="N", help="per-engine deadline in milliseconds")
    search.add_argument("--region", help="region/language, e.g. en-US or zh-CN")
    search.add_argument("--time-range", dest="time_range", metavar="day|week|month|year",
                        help="only recent results: day, week, month or year")
    search.add_argument("--site", metavar="DOMAIN", help="only results from this domain")
    search.add_argument("--allow-domain", dest="allow_domain", action="append", metavar="DOMAIN",
                        help="only results from this domain or its subdomains (repeatable; not with --block-domain)")
    search.add_argument("--block-domain", dest="block_domain", action="append", metavar="DOMAIN",
                        help="no results from this domain or its subdomains (repeatable)")
    search.add_argument("--category", metavar="web|news", help="web (default) or news")
    search.add_argument("--page", metavar="N",
                        help="1-based page of results; page N never repeats a URL of pages 1..N-1")
    search.add_argument("--user-location", dest="user_location", metavar="COUNTRY",
                        help="ISO 3166-1 country such as DE: its region, unless --region is given")
    search.add_argument("--safesearch", metavar="off|moderate|strict", help="off, moderate or strict")
    search.add_argument("--replay", metavar="DIR",
                        help="answer from vcrpy cassettes in DIR or its subfolders (no network)")
    search.add_argument("--no-cache", dest="no_cache", action="store_true", help="bypass the result cache")
    search.add_argument("--ignore-cooldowns", dest="ignore_cooldowns", action="store_true",
                        help="try engines that are cooling down anyway")
    search.add_argument("--read", metavar="N", help="also read the top N result pages and attach their main text")
    search.add_argument("--passages", metavar="K",
                        help="with --read: attach each read page's K best passages for the query instead of its text")
    search.add_argument("--max-tokens", dest="max_tokens", metavar="N",
                        help="fit the answer in about N tokens (rows in rank order; omitted says what was left out)")
    search.add_argument("--render", metavar="auto|always|never",
                        help="with --read: run the read pages' scripts in the installed Chromium: auto (default: "
                             "only a page that looks like an app shell), always, or never")
    search.add_argument("--json", action="store_true", help="print the SearchResponse as JSON")
    search.add_argument("--explain", action="store_true",
                        help="show each row's votes (engine: weight x trust x place) and boosts behind its score")
    search.add_argument("--verbose", action="store_true", help="log what each engine did to stderr")

    engines = commands.add_parser("engines", help="list engines, their tier, weight and state")
    engines.add_argument("--json", action="store_true", help="print the list as JSON")
    engines.add_argument("--endpoint", action="append", metavar="NAME=URL",
                         help="as for search: show the engine at this endpoint (its own cooldown)")
    _add_cooldowns_command(commands)

    schema = commands.add_parser(
        "schema", help="print a tool definition as JSON, ready to give a model: web_search (default), "
                       "web_fetch or web_verify, in OpenAI, Anthropic or MCP form")
    schema.add_argument("--format", choices=("openai", "anthropic", "mcp"), default="openai",
                        metavar="openai|anthropic|mcp",
                        help="openai (default: a function tool), anthropic (input_schema) or mcp (with the "
                             "output schema)")
    schema.add_argument("--json", action="store_true", help="accepted for symmetry: the output is always JSON")
    schema.add_argument("--tool", choices=("web_search", "web_fetch", "web_verify"), default="web_search",
                        metavar="web_search|web_fetch|web_verify",
                        help="web_search (default), web_fetch or web_verify")

    fetch = commands.add_parser("fetch", help="read a web page: its main text, a slice at a time")
    fetch.add_argument("url", help="the http:// or https:// address to read")
    fetch.add_argument("--max-chars", dest="max_chars", metavar="N", help="characters to return (default 20000)")
    fetch.add_argument("--offset", metavar="N", help="where to start in the text (next_offset of the last call)")
    fetch.add_argument("--format", default="markdown", metavar="markdown|text", help="markdown (default) or text")
    fetch.add_argument("--ignore-robots", dest="ignore_robots", action="store_true",
                       help="read even where robots.txt disallows it (a read a person asked for)")
    fetch.add_argument("--query", metavar="Q",
                       help="return the passages that best answer this question, with their offsets")
    fetch.add_argument("--passages", metavar="K", help="how many passages with --query (default: as many as fit in the "
                       "fetch_passage_chars setting, 1,200 characters)")
    fetch.add_argument("--max-tokens", dest="max_tokens", metavar="N",
                       help="fit the answer in about N tokens; omitted says what was left out")
    fetch.add_argument("--render", metavar="auto|always|never",
                       help="run the page's scripts in the installed Chromium: auto (default: only for a page that "
                            "looks like an app shell), always, or never")
    fetch.add_argument("--json", action="store_true", help="print the FetchResponse as JSON")

    verify = commands.add_parser("verify", help="check that a quote occurs in a web page's text")
    verify.add_argument("url", help="the http:// or https:// address of the page")
    verify.add_argument("quote", help="the text to look for (whitespace, case, quote marks, hyphens aside)")
    verify.add_argument("--format", default="markdown", metavar="markdown|text",
                        help="the text the offsets refer to: markdown (default) or text")
    verify.add_argument("--ignore-robots", dest="ignore_robots", action="store_true",
                        help="read even where robots.txt disallows it (a read a person asked for)")
    verify.add_argument("--json", action="store_true", help="print the VerifyResponse as JSON")

    config = commands.add_parser("config", help="print the effective settings (secrets masked)")
    config.add_argument("--json", action="store_true", help="accepted for symmetry: the output is always JSON")

    mcp = commands.add_parser("mcp", help="serve the MCP tools (stdio by default)")
    mcp.add_argument("--http", action="store_true", help="serve streamable HTTP instead of stdio")
    mcp.add_argument("--host", help="address to listen on with --http (default 127.0.0.1; without --http an "
                                    "error: stdio listens on nothing)")
    mcp.add_argument("--port", type=int, metavar="N",
                     help="port to listen on with --http (default 8765; 0: any free one; without --http an error)")

    serve = commands.add_parser("serve", help="serve GET /search, /fetch, /verify, /health and /metrics over HTTP")
    serve.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    serve.add_argument("--port", type=int, default=8080, metavar="N",
                       help="port to listen on (default 8080; 0: any free one)")
    serve.add_argument("--workers", metavar="N",
                       help="processes accepting on the port (default 1, or the workers setting)")
    for name, command in commands.choices.items():  # `--config` before or after the subcommand
        if name != "schema":  # the only command that reads no settings
            command.add_argument("--config", default=argparse.SUPPRESS, metavar="FILE",
                                 help="TOML settings file (default "
                                 "$XDG_CONFIG_HOME/metasearch/config.toml); may come before the subcommand too")
    return parser


def _wants_json(argv: Sequence[str]) -> bool:
    return "--json" in argv


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    as_json = _wants_json(argv)
    parser = None
    try:
        parser = build_parser()
        parser.argv = argv
        args = parser.parse_args(argv)
        if args.version:
            from plugin.version import VERSION

            print(f"metasearch {VERSION}")
            return 0
        if args.command is None:  # bad input: the help goes with the error, on stderr (stdout stays empty)
            if not as_json:
                parser.print_help(sys.stderr)
            raise UsageError("invalid_parameter", "a command is required: search, fetch, verify, engines, cooldowns, "
                                                  "schema, config, mcp or serve (metasearch COMMAND --help)")
        if args.command == "search":
            return _cmd_search(args)
        if args.command == "cooldowns":
            return _cmd_cooldowns(args)
        if args.command == "engines":
            return _cmd_engines(args)
        if args.command == "schema":
            return _cmd_schema(args)
        if args.command == "fetch":
            return _cmd_fetch(args)
        if args.command == "verify":
            return _cmd_verify(args)
        if args.command == "config":
            return _cmd_config(args)
        if args.command == "mcp":
            return _cmd_mcp(args)
        if args.command == "serve":
            return _cmd_serve(args)
        return EXIT_BAD_INPUT
    except UsageError as exc:
        return _emit_error(exc.code, exc.message, as_json)
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:  # output piped into `head` and the like
        return 0
    except Exception as exc:  # bad input never ends in a traceback, nor does a bug of ours
        from plugin.errors import SearchError

        if isinstance(exc, SearchError):
            message = _in_flag_terms(exc.message, exc.details.get("parameter"), parser, argv)
            emitted = _emit_error(exc.code, message, as_json, exc.details)
            return EXIT_PAGE_UNAVAILABLE if getattr(exc, "bad_input", True) is False else emitted
        from plugin.infra.logs import get_logger

        get_logger("metasearch.cli").debug("internal error", exc_info=True)  # METASEARCH_LOG=debug shows it
        return _emit_error("internal_error", f"{type(exc).__name__}: {exc}", as_json)


def _in_flag_terms(message: str, parameter: object, parser: argparse.ArgumentParser | None,
                   argv: Sequence[str]) -> str:
    """`time_range must be …` as the command line says it, `--time-range must be …`: the pipeline names its
    Python argument, the user typed the flag. Only a message that starts with the name of an option of the
    command used changes; the JSON's `parameter` keeps the argument's name."""
    if parser is None or not isinstance(parameter, str) or not message.startswith(parameter + " "):
        return message
    commands = {name: sub for action in parser._actions if isinstance(action, argparse._SubParsersAction)
                for name, sub in action.choices.items()}
    used = next((commands[word] for word in argv if word in commands), None)
    dest = {"allowed_domains": "allow_domain", "blocked_domains": "block_domain"}.get(parameter, parameter)
    flags = [option for action in (used._actions if used else ()) if action.dest == dest
             for option in action.option_strings if option.startswith("--")]
    return flags[0] + message[len(parameter):] if flags else message


def load_settings(args: argparse.Namespace, *, say_warnings: bool = True, **overrides: Any):
    """The settings, with a misspelt METASEARCH_* variable said on stderr: a command whose output has no
    warnings of its own (fetch, verify, engines, cooldowns, serve, mcp) would otherwise ignore it silently.
    `search` passes say_warnings=False: its response's warnings carry them, in the table and the JSON."""
    from plugin.settings import Settings

    settings = Settings.load(getattr(args, "config", None), **overrides)
    if say_warnings:
        for warning in settings.warnings:
            print(f"metasearch: warning: {warning}", file=sys.stderr)
    return settings


def _int_flag(name: str, value: str | None, low: int, high: int) -> int | None:
    if value is None:
        return None
    try:
        number = int(value.strip())
    except ValueError:
        raise UsageError("invalid_parameter", f"{name} must be an integer, got {value[:40]!r}") from None
    if not low <= number <= high:
        raise UsageError("invalid_parameter", f"{name} must be between {low} and {high}, got {number}")
    return number


def _configure_logging(settings, verbose: bool = False) -> None:
    """Log at `settings.log` (METASEARCH_LOG, TOML `log`); --verbose raises it to at least info."""
    import logging

    from plugin.infra.logs import configure

    level = settings.log_level()
    configure(min(level, logging.INFO) if verbose else level)


def _cmd_search(args: argparse.Namespace) -> int:
    import asyncio

    from plugin.settings import parse_endpoints

    query = " ".join(args.query)
    timeout_ms = _int_flag("--timeout-ms", args.timeout_ms, 50, 120000)
    endpoints = parse_endpoints(args.endpoint)  # checked like METASEARCH_ENDPOINTS, before anything runs
    settings = load_settings(args, say_warnings=False, timeout_ms=timeout_ms)
    _configure_logging(settings, args.verbose)
    if endpoints:
        settings = settings.model_copy(update={"endpoints": {**settings.endpoints, **endpoints}})
    from plugin.models import ANSWERED_STATUSES
    from plugin.pipeline.searcher import Searcher

    transport = page_transport = None
    state = None
    now = None
    if args.replay:
        # Answer from recordings: no network, the recording's own moment, placeholder keys.
        from plugin.bench.replay import Recordings, ReplayTransport, no_recordings, same_query
        from plugin.bench.runner import replay_settings

        if not os.path.isdir(args.replay):
            raise UsageError("invalid_parameter", f"--replay directory {args.replay!r} does not exist")
        recordings = Recordings.from_dir(args.replay)
        for problem in recordings.skipped:  # one odd file does not stop the others
            print(f"metasearch: skipped {os.path.join(args.replay, problem)}", file=sys.stderr)
        if not recordings.cassettes:
            raise UsageError("invalid_parameter", no_recordings(args.replay, subfolders=True))
        settings = replay_settings(settings, recordings.engines())
        transport = ReplayTransport(settings, recordings)
        # --read reads the recordings' copies of pages, never the network (robots.txt was the recording's).
        settings = settings.model_copy(update={"fetch_robots": False})
        page_transport = ReplayTransport(settings, recordings)
        now = recordings.recorded_at(query)
        from plugin.infra.state import MemoryState

        state = MemoryState()  # a replay neither reads nor writes the real cooldowns and cache

    async def run():
        searcher = Searcher(settings, transport=transport, state=state, page_transport=page_transport)
        try:
            return await searcher.search(query, limit=args.limit, engines=args.engines, region=args.region,
                                         time_range=args.time_range, site=args.site, safesearch=args.safesearch,
                                         allowed_domains=args.allow_domain, blocked_domains=args.block_domain,
                                         category=args.category, page=args.page,
                                         user_location=args.user_location,
                                         now=now, cache=not args.no_cache,
                                         ignore_cooldowns=args.ignore_cooldowns, read=args.read,
                                         passages=args.passages, max_tokens=args.max_tokens,
                                         explain=args.explain, render=args.render)
        finally:
            await searcher.close()

    response = asyncio.run(run())
    if args.replay and not any(report.status in ANSWERED_STATUSES for report in response.engines) and all(
            report.status in ("skipped", "disabled") for report in response.engines):
        news = args.category == "news"  # recordings of web search do not answer a news search
        recorded = recordings.queries("news" if news else "web")
        asked = sorted({text for text in transport.missed.values() if text and same_query(text) != same_query(query)})
        why = ""
        if asked:  # an operator or option (--site, domain lists, a region) changed what the engines were sent
            why = (f"; the engines were sent {', '.join(repr(a) for a in asked[:3])} (options such as --site, "
                   "--allow-domain and --block-domain change the query sent, and recordings are looked up by it: "
                   "record with the same options)")
        kind = "news search" if news else "web search"
        listed = (f"recorded {'news ' if news else ''}queries: " + ", ".join(repr(q) for q in recorded[:10])
                  + (" …" if len(recorded) > 10 else "")) if recorded else f"no {kind} is recorded there"
        print(f"metasearch: nothing in {args.replay} was recorded for {query!r}{' as a news search' if news else ''}"
              f"{why}; {listed}", file=sys.stderr)
    if args.json:
        print(response.model_dump_json(indent=2))
    else:
        from plugin.pipeline.query import check_engines
        from plugin.surfaces.render import render_table

        print(render_table(response, verbose=args.verbose, named=check_engines(args.engines) or ()))
    return search_exit_status(response)


def _cmd_engines(args: argparse.Namespace) -> int:
    import asyncio

    from plugin.surfaces.catalog import engine_catalog, render_catalog

    from plugin.settings import parse_endpoints

    endpoints = parse_endpoints(args.endpoint)  # checked as for search, so both name the same upstream
    settings = _with_endpoints(load_settings(args), endpoints)
    rows = asyncio.run(engine_catalog(settings))
    if args.json:
        print(json.dumps(rows, indent=2, ensure_ascii=False))
    else:
        print(render_catalog(rows))
    return 0


def _with_endpoints(settings, endpoints: dict[str, str]):
    return settings.model_copy(update={"endpoints": {**settings.endpoints, **endpoints}}) if endpoints else settings


def _add_cooldowns_command(commands) -> None:
    cooldowns = commands.add_parser("cooldowns", help="list the engines cooling down (benched), or clear them")
    cooldowns.add_argument("--clear", nargs="?", const="*", metavar="ENGINE",
                           help="clear every cooldown, or those of ENGINE (a name, or an engine@endpoint upstream)")
    cooldowns.add_argument("--json", action="store_true", help="print the report as JSON")


def _cmd_cooldowns(args: argparse.Namespace) -> int:
    import asyncio

    from plugin.surfaces.catalog import cooldown_report, render_cooldowns

    clear = args.clear
    if clear not in (None, "*") and "@" not in clear:
        from plugin.pipeline.query import check_engines

        check_engines([clear])  # a name that is no engine: unknown_engine
    elif clear not in (None, "*"):
        from plugin.pipeline.query import check_engines
        from plugin.settings import upstream_key

        check_engines([clear.split("@", 1)[0]])  # nope@url named no engine, and cleared nothing, silently
        try:
            clear = upstream_key(clear)  # the key in the one spelling the store uses
        except ValueError as exc:
            raise UsageError("invalid_parameter", f"--clear {clear[:100]}: {exc}") from None
    report = asyncio.run(cooldown_report(load_settings(args), clear=clear))
    print(json.dumps(report, indent=2, ensure_ascii=False) if args.json else render_cooldowns(report))
    return 0


def _cmd_schema(args: argparse.Namespace) -> int:
    from plugin.surfaces.schemas import tool_schema

    print(json.dumps(tool_schema(args.format, args.tool), indent=2, ensure_ascii=False))
    return 0


def _cmd_fetch(args: argparse.Namespace) -> int:
    """Exit 0 with the text, 2 for bad input (invalid_url, invalid_parameter), 3 when the page could not be
    had (private_address, blocked_by_robots, http_error, timeout, too_large, unsupported_content,
    not_extractable)."""
    import asyncio

    from plugin.reading.reader import Reader

    settings = load_settings(args)

    async def run():
        async with Reader(settings) as reader:
            return await reader.fetch(args.url, max_chars=args.max_chars, offset=args.offset, format=args.format,
                                      ignore_robots=args.ignore_robots, query=args.query, passages=args.passages,
                                      max_tokens=args.max_tokens, render=args.render)

    response = asyncio.run(run())
    if args.json:
        print(response.model_dump_json(indent=2))
    else:
        from plugin.surfaces.render import render_page

        print(render_page(response))
    return 0


def _cmd_verify(args: argparse.Namespace) -> int:
    """Exit 0 when the quote occurs in the page, 1 when it does not, 2 for bad input, 3 when the page could
    not be had (as fetch)."""
    import asyncio

    from plugin.reading.reader import Reader
    from plugin.reading.verify import verify_with

    settings = load_settings(args)

    async def run():
        async with Reader(settings) as reader:
            return await verify_with(reader, args.url, args.quote, format=args.format,
                                     ignore_robots=args.ignore_robots)

    response = asyncio.run(run())
    if args.json:
        print(response.model_dump_json(indent=2))
    else:
        from plugin.surfaces.render import render_verify

        print(render_verify(response))
    return EXIT_OK if response.found else EXIT_NO_RESULTS


def _cmd_config(args: argparse.Namespace) -> int:
    from plugin.surfaces.catalog import masked_settings

    from plugin.infra.state import describe_state

    settings = load_settings(args)  # says a misspelt METASEARCH_* variable on stderr
    data = masked_settings(settings)
    data["state_store"] = describe_state(settings)  # which store, and how full its cache is
    # JSON either way; --json is accepted as on the other commands that print data (schema too).
    data["warnings"] = settings.warnings  # a misspelt METASEARCH_* variable, with the closest setting
    print(json.dumps(data, indent=2, ensure_ascii=False, default=str))
    return 0


def check_port_free(host: str, port: int) -> None:
    """Refuse a port another process listens on, with one clear message for `serve` and `mcp --http`."""
    import socket

    if not 0 <= port <= 65535:
        raise UsageError("invalid_parameter", f"--port must be between 0 and 65535, got {port}")
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except OSError as exc:
        raise UsageError("invalid_parameter", f"--host {host!r} cannot be used: {exc}") from None
    family, kind, proto, _, address = infos[0]
    with socket.socket(family, kind, proto) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as the servers themselves do
        try:
            probe.bind(address)
        except OSError as exc:
            raise UsageError("invalid_parameter", port_in_use_message(host, port, exc)) from None


def port_in_use_message(host: str, port: int, exc: OSError) -> str:
    return f"cannot listen on {host}:{port}: {exc.strerror or exc}; choose another with --port"


def _cmd_mcp(args: argparse.Namespace) -> int:
    if not args.http:  # stdio listens on nothing: a port or host would be silently ignored
        given = [flag for flag, value in (("--port", args.port), ("--host", args.host)) if value is not None]
        if given:
            verb = "applies" if len(given) == 1 else "apply"
            raise UsageError("invalid_parameter", f"{' and '.join(given)} only {verb} with --http (streamable "
                                                  f"HTTP); add --http, or leave {' and '.join(given)} out for stdio")
    args.host = "127.0.0.1" if args.host is None else args.host
    args.port = 8765 if args.port is None else args.port
    if args.http:
        check_port_free(args.host, args.port)
    from plugin.errors import SearchError
    from plugin.surfaces.mcp_server import serve

    try:
        settings, problem = load_settings(args), None
    except SearchError as exc:
        # The server still starts, so the client shows the reason on every call instead of
        # "server disconnected"; the same line goes to stderr for the client's log.
        settings, problem = None, exc
        print(f"metasearch: error [{exc.code}]: {exc.message}", file=sys.stderr)
    serve(settings, http=args.http, host=args.host, port=args.port, settings_error=problem)
    return 0


def _cmd_serve(args: argparse.Namespace) -> int:
    from plugin.surfaces.service import serve

    workers = _int_flag("--workers", args.workers, 1, 64)
    settings = load_settings(args)
    check_port_free(args.host, args.port)
    try:
        serve(settings, host=args.host, port=args.port, workers=workers)
    except OSError as exc:  # lost a race for the port after the check
        raise UsageError("invalid_parameter", port_in_use_message(args.host, args.port, exc)) from None
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
