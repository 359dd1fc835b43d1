"""METASEARCH_CA_BUNDLE (issue 26, item 5): extra roots trusted for engines and page reads alike, on both
transports; without them a self-signed server is refused, since certificates are always checked."""

from __future__ import annotations


import pytest

from pages import ROBOTS_OPEN, article_html, routes
from plugin.errors import FetchError, SearchError
from plugin.reading.reader import Reader
from plugin.settings import Settings
from standins import bing_page, page
from test_proxies import TlsStandIn, throwaway_ca

pytestmark = pytest.mark.usefixtures("both_transports")


@pytest.fixture
async def tls_site(tmp_path):
    """A TLS server on 127.0.0.1 whose certificate a throw-away CA signed, and that CA's PEM file."""
    context, bundle = throwaway_ca(tmp_path, pem="corporate-root.pem")
    site = TlsStandIn(routes({"/robots.txt": ROBOTS_OPEN, "/post": page(article_html()),
                              "/search": page(bing_page([("Rust async", "https://rust-lang.org/async", "rust async")]))}))
    site.ssl_context = context
    await site.start()
    yield site, bundle
    await site.stop()


async def test_the_bundle_lets_engines_and_page_reads_trust_a_private_root(tls_site, monkeypatch):
    from plugin.pipeline.searcher import Searcher

    site, bundle = tls_site
    monkeypatch.setenv("METASEARCH_CA_BUNDLE", str(bundle))
    settings = Settings(endpoints={"bing": site.url}, engines=["bing"], allow_private_hosts="127.0.0.1/32",
                        state_backend="memory")
    assert settings.ca_bundle == bundle
    async with Searcher(settings) as searcher:
        found = await searcher.search("rust async")
    assert found.engines[0].status == "ok"
    async with Reader(settings) as reader:
        assert (await reader.fetch(site.url + "/post")).status == 200


async def test_without_the_bundle_a_private_root_is_refused(tls_site):
    from plugin.pipeline.searcher import Searcher

    site, _ = tls_site
    settings = Settings(endpoints={"bing": site.url}, engines=["bing"], allow_private_hosts="127.0.0.1/32",
                        state_backend="memory")
    async with Searcher(settings) as searcher:
        found = await searcher.search("rust async")
    assert found.engines[0].status == "error" and "CERTIFICATE_VERIFY_FAILED" in found.engines[0].detail
    async with Reader(settings) as reader:
        with pytest.raises(FetchError) as caught:
            await reader.fetch(site.url + "/post")
    assert caught.value.code == "http_error" and "CERTIFICATE_VERIFY_FAILED" in caught.value.message
    assert site.requests == []  # no request got past the handshake


def test_a_bundle_that_is_missing_or_holds_no_certificate_is_named(tmp_path, monkeypatch):
    empty = tmp_path / "empty.pem"
    empty.write_text("not a certificate\n")
    for value, why in ((str(tmp_path / "missing.pem"), "cannot be read"), (str(empty), "holds no PEM certificate")):
        monkeypatch.setenv("METASEARCH_CA_BUNDLE", value)
        with pytest.raises(SearchError) as caught:
            Settings()
        assert "METASEARCH_CA_BUNDLE" in caught.value.message and why in caught.value.message
