"""Registrable domains by the Public Suffix List, exactly as tldextract finds them, without importing it.

tldextract with `suffix_list_urls=()` (its bundled snapshot, never the network) is what the project
relies on; but importing it costs a search process ~0.1-0.2 s of CPU, most of it `requests` and
`filelock`, which it never uses offline. This module reads the same bundled snapshot file and applies
the same lookup (tldextract's reversed-label trie over the public suffixes, wildcard and exception
rules; private suffixes ignored, tldextract's default). tests/test_suffixes.py holds it to tldextract
itself over every rule of the list.
"""

from __future__ import annotations

import functools
import importlib.util
import re
from pathlib import Path

from plugin.infra import memo

# As tldextract.suffix_list reads the snapshot.
_RULE = re.compile(r"^(?P<suffix>[.*!]*\w[\S]*)", re.UNICODE | re.MULTILINE)
_PRIVATE_SECTION = "// ===BEGIN PRIVATE DOMAINS==="
_IPV4 = re.compile(r"^(?:(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.){3}(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)$")
_DOTS = ("\u3002", "\uff0e", "\uff61")


class _Node:
    __slots__ = ("children", "end")

    def __init__(self) -> None:
        self.children: dict[str, _Node] = {}
        self.end = False


def snapshot_path() -> Path:
    """tldextract's bundled copy of the list (found without importing the package)."""
    spec = importlib.util.find_spec("tldextract")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError("tldextract is not installed; its bundled public suffix list is needed")
    return Path(list(spec.submodule_search_locations)[0]) / ".tld_set_snapshot"


@memo.register_table
@functools.lru_cache(maxsize=1)
def _trie() -> _Node:
    text = snapshot_path().read_text(encoding="utf-8")
    public = text.partition(_PRIVATE_SECTION)[0]
    root = _Node()
    for match in _RULE.finditer(public):
        node = root
        for label in reversed(match.group("suffix").split(".")):
            node = node.children.setdefault(label, _Node())
        node.end = True
    return root


def _decoded(label: str) -> str:
    lowered = label.lower()
    if lowered.startswith("xn--"):
        try:
            import idna  # as tldextract decodes punycode labels (IDNA 2008)

            return idna.decode(lowered)
        except (UnicodeError, IndexError, ImportError):
            pass
    return lowered


def _suffix_index(labels: list[str]) -> int | None:
    """Index of the first label of the public suffix; None when no rule matches."""
    node = _trie()
    suffix_index = label_index = len(labels)
    for label in reversed(labels):
        decoded = _decoded(label)
        child = node.children.get(decoded)
        if child is not None:
            label_index -= 1
            node = child
            if node.end:
                suffix_index = label_index
            continue
        if "*" in node.children:  # wildcard rule; an exception rule (!label) stops it one label short
            return label_index if "!" + decoded in node.children else label_index - 1
        break
    return None if suffix_index == len(labels) else suffix_index


def split_host(host: str) -> tuple[str, str]:
    """(domain label, public suffix) of a host name, as tldextract's `domain` and `suffix`."""
    host = host.rpartition("@")[2]
    if host.startswith("["):  # an IPv6 literal has no suffix
        return host.partition("]")[0] + "]", ""
    host = host.partition(":")[0].strip()
    for dot in _DOTS:
        host = host.replace(dot, ".")
    host = host.rstrip(".")
    labels = host.split(".")
    index = _suffix_index(labels)
    if index is None:
        return (host if len(labels) == 4 and _IPV4.match(host) else labels[-1]), ""
    return (labels[index - 1] if index > 0 else ""), ".".join(labels[index:])


def registrable(host: str) -> str | None:
    """python.org for docs.python.org; None when the host has no registrable domain (an IP address,
    a bare suffix, a name under no known suffix)."""
    domain, suffix = split_host(host)
    return f"{domain}.{suffix}" if domain and suffix else None
