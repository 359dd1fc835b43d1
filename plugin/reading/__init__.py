"""Reading pages for a model: `plugin.fetch` / `plugin.fetch_sync` and search's `read=N`.

- `reader`: the read, end to end (cache, robots, hops, content, slice) and the public functions.
- `hops`: getting a page through the one transport, redirects followed and checked hop by hop.
- `addresses`: which URLs and addresses a read may reach (SSRF guard, guarded DNS resolver).
- `robots`: robots.txt as RFC 9309 says, verdicts cached in the state store.
- `documents`: bytes to text by content type; `extract` (HTML main text), `markdown` (rendering),
  `pdf` (PDF text).
- `attach`: search's `read=N`, the top rows' text within the search's deadline and one character budget;
  `sent` (page text an engine sent with its rows, made like a read page).

Nothing here is imported by `plugin.search`'s start-up path; trafilatura, lxml and pypdf load on the
first read.
"""
