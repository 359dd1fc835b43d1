"""The browser a scraped engine sees: one Chrome, whose every header tells the same story.

A `Profile` is one browser build: the TLS and HTTP/2 fingerprint the transport presents (`name`, a
curl_cffi impersonation target: cipher suites, extensions, key shares, ALPS, HTTP/2 SETTINGS and
WINDOW_UPDATE, pseudo-header order) and the headers that go with it, in the order that browser sends
them (recorded from Chromium on a loopback listener: bench/fingerprints/). The Chrome version in the
User-Agent, in the client hints (`sec-ch-ua`) and in the TLS profile is one number, `major`; one profile
serves an engine for its whole session, never a mix per request. Engines name their profile in their facts
(`EngineFacts.profile`); keyed JSON APIs name none and go out as what they are, an API client.

Pure data: engines build their requests with these headers; the transport (plugin/infra/transport.py)
sends them in this order and adds only what the browser itself would (content-length, cookie).
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import urlsplit


@dataclass(frozen=True)
class Profile:
    name: str  # the impersonation target of the TLS and HTTP/2 layers (curl_cffi), e.g. "chrome150"
    major: int  # the Chrome version every header states
    platform: str  # sec-ch-ua-platform
    os_token: str  # the User-Agent's platform part

    @property
    def user_agent(self) -> str:
        return (f"Mozilla/5.0 ({self.os_token}) AppleWebKit/537.36 (KHTML, like Gecko) "
                f"Chrome/{self.major}.0.0.0 Safari/537.36")

    @property
    def client_hints(self) -> str:
        # Chrome's brand list for this major version (its GREASE brand and order change with the version).
        return f'"Not;A=Brand";v="8", "Chromium";v="{self.major}", "Google Chrome";v="{self.major}"'

    def navigate(self, url: str, region: str | None = None, *, referer: str | None = None) -> dict[str, str]:
        """A top-level GET as Chrome sends it when a person opens `url` (typed, or followed from `referer`)."""
        headers = {
            "sec-ch-ua": self.client_hints,
            "sec-ch-ua-mobile": "?0",
            "sec-ch-ua-platform": f'"{self.platform}"',
            "Upgrade-Insecure-Requests": "1",
            "User-Agent": self.user_agent,
            "Accept": NAVIGATE_ACCEPT,
            "Sec-Fetch-Site": fetch_site(url, referer),
            "Sec-Fetch-Mode": "navigate",
            "Sec-Fetch-User": "?1",
            "Sec-Fetch-Dest": "document",
        }
        if referer:
            headers["Referer"] = referer
        headers.update({"Accept-Encoding": ACCEPT_ENCODING, "Accept-Language": accept_language(region),
                        "Priority": "u=0, i"})
        return headers

    def form_post(self, url: str, referer: str, region: str | None = None) -> dict[str, str]:
        """A form submitted by a person on the page at `referer` (a POST navigation), as Chrome sends it:
        `Cache-Control`, then `Content-Type` before the User-Agent, `Origin` after it, `Referer` after the
        fetch metadata. (Chrome sends `content-length` first; the transport puts it there.)"""
        origin = "{0.scheme}://{0.netloc}".format(urlsplit(referer))
        return {
            "Cache-Control": "max-age=0",
            "sec-ch-ua": self.client_hints,
            "sec-ch-ua-mobile": "?0",
            "sec-ch-ua-platform": f'"{self.platform}"',
            "Upgrade-Insecure-Requests": "1",
            "Content-Type": "application/x-www-form-urlencoded",
            "User-Agent": self.user_agent,
            "Origin": origin,
            "Accept": NAVIGATE_ACCEPT,
            "Sec-Fetch-Site": fetch_site(url, referer),
            "Sec-Fetch-Mode": "navigate",
            "Sec-Fetch-User": "?1",
            "Sec-Fetch-Dest": "document",
            "Referer": referer,
            "Accept-Encoding": ACCEPT_ENCODING,
            "Accept-Language": accept_language(region),
            "Priority": "u=0, i",
        }


NAVIGATE_ACCEPT = ("text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,image/apng,*/*;q=0.8,"
                   "application/signed-exchange;v=b3;q=0.7")
ACCEPT_ENCODING = "gzip, deflate, br, zstd"

# The profile every scraped engine and every page read presents: Chrome 150 on Windows (the most common
# desktop); its TLS and HTTP/2 fingerprint equals the Debian chromium 150's (tests/test_fingerprint.py).
CHROME = Profile(name="chrome150", major=150, platform="Windows", os_token="Windows NT 10.0; Win64; x64")
PROFILES: dict[str, Profile] = {CHROME.name: CHROME}
# What Chrome puts last: headers the transport adds (cookie) go before it, where Chrome sends them.
LAST_HEADER = "priority"

# Kept for callers that name the identity (tests, settings docs): the default profile's User-Agent.
USER_AGENT = CHROME.user_agent


def fetch_site(url: str, referer: str | None) -> str:
    """Sec-Fetch-Site of a navigation to `url` from `referer`: none (typed), same-origin, same-site or
    cross-site (registrable domains compared by their last two labels, enough for the engines' own hosts)."""
    if not referer:
        return "none"
    target, source = urlsplit(url), urlsplit(referer)
    if (target.scheme, target.netloc) == (source.scheme, source.netloc):
        return "same-origin"
    site = lambda host: ".".join((host or "").split(".")[-2:])  # noqa: E731
    return "same-site" if site(target.hostname) == site(source.hostname) else "cross-site"


def accept_language(region: str | None) -> str:
    if not region:
        return "en-US,en;q=0.9"
    lang = region.split("-")[0].lower()
    if lang == "en":
        return f"{region},en;q=0.9"
    return f"{region},{lang};q=0.9,en;q=0.6"


def api_headers() -> dict[str, str]:
    return {"Accept": "application/json", "User-Agent": "metasearch/0.1 (+https://pypi.org/project/metasearch)"}
