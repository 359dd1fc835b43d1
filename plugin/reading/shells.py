"""Knowing an app shell when we see one: a page whose HTML is not the page a person sees.

A page built by scripts (a React or Vue app, a docs site that loads its text as JSON, a "please enable
JavaScript" wall) reads, without a browser, as its shell: a placeholder sentence or nothing. That text
must never pass for the page. `shell_signs(html, main_chars)` names what gives a shell away:

- an empty mount element (`<div id="root"></div>`, `#app`, `#__next`, `#__nuxt`, `<app-root>`, ...);
- a `<noscript>` that asks for JavaScript;
- little visible text against scripts (an external script, or many kilobytes of inline script);
- a client-side redirect (`<meta http-equiv="refresh">`, or a script that sets `location`) on a page
  with next to no text of its own.

Each sign counts only while the page shows little text of its own (and the main text read is short),
so an article with a Disqus `<noscript>`, a comments widget's empty mount or an analytics bundle is not
a shell. A page whose extracted main text is long
(`LONG_TEXT` characters or more) is not looked at again at all: the check costs a plain read nothing
unless the read came back short. The HTML is parsed with selectolax (lexbor), already a dependency.
"""

from __future__ import annotations

import re

LONG_TEXT = 1500  # main text this long is the page, whatever its scripts do
SHORT_MAIN = 500  # an empty mount or a noscript counts only while the main text read is shorter than this
LITTLE_TEXT = 300  # visible characters below which scripts or a redirect make the page a shell
MOUNT_TEXT = 1500  # an empty mount element on a page with less visible text than this: a shell
NOSCRIPT_TEXT = 1000  # a noscript asking for JavaScript on a page with less visible text than this
INLINE_SCRIPT = 2000  # characters of inline script that outweigh little text

# Where single-page apps mount: ids (React, Vue, Next, Nuxt, Gatsby, Svelte, Remix, Ember) and tags.
MOUNT_IDS = ("root", "app", "__next", "__nuxt", "___gatsby", "svelte", "react-root", "app-root", "main-app",
             "application", "spa-root", "vue-app", "ember-app", "remix", "q-app")
MOUNT_TAGS = ("app-root",)  # Angular
_ASKS_FOR_JS = re.compile(
    r"(enable|turn\s+on|activate|allow|requires?|need|needs|must\s+have|without)\b.{0,60}\bjava\s*script"
    r"|java\s*script\b.{0,60}\b(required|disabled|enabled|needed|is\s+off|turned\s+off|must\s+be)", re.I | re.S)
_SETS_LOCATION = re.compile(r"\b(?:window\.|document\.|top\.|self\.)?location(?:\.href)?\s*=(?!=)"
                            r"|\blocation\.(?:replace|assign)\s*\(", re.I)
_DATA_SCRIPTS = frozenset({"application/json", "application/ld+json", "text/template", "text/x-template",
                           "importmap", "speculationrules", "text/html", "text/x-handlebars-template"})
_SPACE = re.compile(r"\s+")


def shell_signs(html: str, main_chars: int) -> list[str]:
    """Why the page at `html` looks like an app shell (empty when it does not). `main_chars`: the length
    of the main text the plain read extracted from it."""
    if main_chars >= LONG_TEXT or not html:
        return []
    from selectolax.lexbor import LexborHTMLParser

    tree = LexborHTMLParser(html)
    scripts = tree.css("script")
    external = 0
    inline = 0
    redirect_script = False
    for script in scripts:
        kind = (script.attributes.get("type") or "").strip().lower()
        if kind in _DATA_SCRIPTS or kind.endswith("+json") or kind.endswith("/json"):
            continue
        if script.attributes.get("src"):
            external += 1
            continue
        code = script.text(deep=True) or ""
        inline += len(code)
        redirect_script = redirect_script or bool(_SETS_LOCATION.search(code))
    noscripts = [node.text(deep=True) or "" for node in tree.css("noscript")]
    refresh = any("url=" in (meta.attributes.get("content") or "").lower().replace(" ", "")
                  for meta in tree.css("meta")
                  if (meta.attributes.get("http-equiv") or "").strip().lower() == "refresh")
    mounts = [node for node in tree.css(", ".join([*(f'[id="{name}"]' for name in MOUNT_IDS), *MOUNT_TAGS]))
              if _empty(node)]
    body = tree.body
    if body is not None:
        body.strip_tags(["script", "style", "noscript", "template", "svg"])
    visible = len(_SPACE.sub(" ", body.text(deep=True, separator=" ") if body is not None else "").strip())

    signs: list[str] = []
    if mounts and visible < MOUNT_TEXT and main_chars < SHORT_MAIN:
        node = mounts[0]
        name = node.attributes.get("id")
        signs.append(f"an empty mount element (<{node.tag}" + (f' id="{name}"' if name else "") + ">)")
    if visible < NOSCRIPT_TEXT and main_chars < SHORT_MAIN and any(_ASKS_FOR_JS.search(text) for text in noscripts):
        signs.append("a noscript that asks for JavaScript")
    if visible < LITTLE_TEXT and (external or inline >= INLINE_SCRIPT):
        weight = ([f"{external} external script" + ("s" if external != 1 else "")] if external else []) + (
            [f"{inline // 1000} kB of inline script"] if inline >= INLINE_SCRIPT else [])
        signs.append(f"little text ({visible} characters) against {' and '.join(weight)}")
    if visible < LITTLE_TEXT and (refresh or redirect_script):
        signs.append("a client-side redirect (" + ("meta refresh" if refresh else "a script sets location") + ")")
    return signs


def _empty(node) -> bool:
    """A mount element with nothing a person would read in it (whitespace, or only empty elements)."""
    return not (node.text(deep=True) or "").strip() and node.css_first("img, video, svg, canvas, iframe") is None


SHELL_WARNING = "the page looks built by scripts"


def shell_warning(signs: list[str], outcome: str) -> str:
    """The warning a shell read carries in every surface: what gave it away, and what was done."""
    return f"{SHELL_WARNING} ({'; '.join(signs)}): {outcome}"
