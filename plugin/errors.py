"""Errors a caller can act on: a machine-readable code and a human reason."""

from __future__ import annotations

import functools
import inspect
from typing import Any, Callable, Iterable, ParamSpec, Sequence, TypeVar

# The codes are a contract (CLI, Python API and MCP answer with the same ones).
QUERY_REQUIRED = "query_required"
QUERY_TOO_LONG = "query_too_long"
UNKNOWN_ENGINE = "unknown_engine"
INVALID_PARAMETER = "invalid_parameter"


class SearchError(ValueError):
    def __init__(self, code: str, message: str, **details: object):
        super().__init__(message)
        self.code = code
        self.message = message
        parameter = details.get("parameter")
        if isinstance(parameter, (list, tuple)):  # always one type: the names, comma-separated
            details["parameter"] = ", ".join(map(str, parameter))
        self.details = details

    def to_dict(self) -> dict[str, object]:
        error: dict[str, object] = {"code": self.code, "message": self.message}
        error.update(self.details)
        return {"error": error}


# ----- reading a page (plugin.fetch) -----
INVALID_URL = "invalid_url"
PRIVATE_ADDRESS = "private_address"
BLOCKED_BY_ROBOTS = "blocked_by_robots"
HTTP_ERROR = "http_error"
TIMEOUT = "timeout"
TOO_LARGE = "too_large"
UNSUPPORTED_CONTENT = "unsupported_content"
NOT_EXTRACTABLE = "not_extractable"
# Our load, not the page: the read waited its turn at the host until the caller's deadline passed.
OVERLOADED = "overloaded"

# Codes that mean the caller asked wrongly (CLI exit 2, HTTP 400); every other fetch code means the page
# could not be had (CLI exit 3, HTTP 403/502/503/504).
BAD_INPUT_CODES = frozenset({INVALID_URL, INVALID_PARAMETER})
_HTTP_STATUS = {INVALID_URL: 400, INVALID_PARAMETER: 400, PRIVATE_ADDRESS: 403, BLOCKED_BY_ROBOTS: 403,
                HTTP_ERROR: 502, TIMEOUT: 504, TOO_LARGE: 502, UNSUPPORTED_CONTENT: 502, NOT_EXTRACTABLE: 502,
                OVERLOADED: 503}


class FetchError(SearchError):
    """A page that could not be read, or a read asked for wrongly. `details` may carry `status` (the
    page's HTTP status, for http_error) and `url` (the hop that failed)."""

    @property
    def bad_input(self) -> bool:
        return self.code in BAD_INPUT_CODES

    @property
    def http_status(self) -> int:
        return _HTTP_STATUS.get(self.code, 502)


# ----- arguments a surface does not take -----
def unknown_arguments(where: str, given: Iterable[str], known: Sequence[str]) -> SearchError | None:
    """invalid_parameter naming each of `given` that `where` does not take, with the closest known name
    (`lang (did you mean ...?)`), or None when every name is known. One message for the Python API, the
    MCP tools and `serve`, so a model reads the same correction whatever it calls."""
    import difflib

    unknown = [name for name in dict.fromkeys(given) if name not in known]
    if not unknown:
        return None
    hints = [f"{name} (did you mean {close[0]}?)" if (close := difflib.get_close_matches(name, known, n=1))
             else name for name in unknown]
    return SearchError(INVALID_PARAMETER, f"{where} does not take {', '.join(hints)}; its parameters are "
                       f"{', '.join(known) or 'none'}", parameter=unknown)


def engine_names_with_hints(unknown: Sequence[str], known: Iterable[str]) -> str:
    """`bingo (did you mean bing or bing-cn?), altavista`: each unknown engine name with the closest known
    ones. One wording for the `engines` argument, `--endpoint` and the `engines` setting."""
    import difflib

    known = list(known)
    return ", ".join(f"{name} (did you mean {' or '.join(close)}?)"
                     if (close := difflib.get_close_matches(name, known, n=3)) else name for name in unknown)


def missing_arguments(where: str, missing: Sequence[str]) -> SearchError:
    return SearchError(INVALID_PARAMETER, f"{where} needs {', '.join(missing)}", parameter=list(missing))


P = ParamSpec("P")
R = TypeVar("R")


def checked_arguments(function: Callable[P, R], *, like: Callable[..., Any] | None = None,
                      error: type[SearchError] = SearchError) -> Callable[P, R]:
    """`function`, but a call whose arguments do not fit its signature (or `like`'s, for a wrapper taking
    **kwargs) raises SearchError(invalid_parameter) naming them instead of TypeError: an argument a
    model invented (`lang="en"`) or left out reaches a harness loop's `except SearchError` and goes back
    to the model as a correction, as on MCP. The signature stays what IDEs and type checkers see; a
    parameter added to `function` is accepted with no other change."""
    if getattr(function, "__checked_arguments__", False):
        return function
    signature = inspect.signature(like or function)
    where = f"{function.__name__}()"
    parameters = signature.parameters.values()
    takes_any_name = any(p.kind is p.VAR_KEYWORD for p in parameters)
    positional = [p.name for p in parameters if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    method = positional[:1] == ["self"]  # a method's own object is no argument of the caller's
    by_name = [p.name for p in parameters if p.kind is p.KEYWORD_ONLY]
    known = [*positional[method:], *by_name]

    def check(args: tuple, kwargs: dict) -> None:
        problem = _misfit(args, kwargs)
        if problem is not None:
            raise error(problem.code, problem.message, **problem.details)

    def _misfit(args: tuple, kwargs: dict) -> SearchError | None:
        if not takes_any_name and (problem := unknown_arguments(where, kwargs, known)) is not None:
            return problem
        try:
            signature.bind(*args, **kwargs)
        except TypeError:
            pass
        else:
            return None
        if len(args) > len(positional):
            return SearchError(INVALID_PARAMETER, f"{where} takes only {', '.join(positional[method:]) or 'nothing'} "
                               f"by position; pass the others by name ({', '.join(by_name)})")
        twice = [name for name in positional[:len(args)] if name in kwargs]
        if twice:
            return SearchError(INVALID_PARAMETER, f"{where} got {', '.join(twice)} twice", parameter=twice)
        given = set(positional[:len(args)]) | set(kwargs)
        return missing_arguments(where, [p.name for p in parameters if p.default is p.empty
                                         and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
                                         and p.name not in given])

    if inspect.iscoroutinefunction(function):
        @functools.wraps(function)
        async def checked_coroutine(*args: P.args, **kwargs: P.kwargs) -> Any:
            check(args, kwargs)
            return await function(*args, **kwargs)  # type: ignore[misc]

        checked: Any = checked_coroutine
    else:
        @functools.wraps(function)
        def checked_call(*args: P.args, **kwargs: P.kwargs) -> R:
            check(args, kwargs)
            return function(*args, **kwargs)

        checked = checked_call
    checked.__checked_arguments__ = True
    if like is not None:  # help() and IDEs show the arguments it really takes
        checked.__signature__ = signature.replace(return_annotation=inspect.signature(function).return_annotation)
    return checked
