"""The body collector (plugin.infra.exchange.Body) on its own: however a compressed body is cut into chunks
on the wire, it decodes to the same bytes, and a stream cut short is refused, never passed off as the page.
Hypothesis draws the page, the encoding (deflate with its zlib header, raw deflate as older servers send it,
gzip) and the chunk boundaries."""

from __future__ import annotations

import zlib

import pytest
from examples import scaled
from hypothesis import given, settings
from hypothesis import strategies as st

from plugin.infra.exchange import Body, TransportError

CAP = 1 << 20
FORMS = {"deflate-zlib": ("deflate", 15), "deflate-raw": ("deflate", -15), "gzip": ("gzip", 31)}


def packed(data: bytes, wbits: int) -> bytes:
    packer = zlib.compressobj(wbits=wbits)
    return packer.compress(data) + packer.flush()


def chunks(wire: bytes, cuts: list[int]) -> list[bytes]:
    edges = sorted({0, len(wire), *(c % (len(wire) + 1) for c in cuts)})
    return [wire[a:b] for a, b in zip(edges, edges[1:])]


@settings(max_examples=scaled(200), deadline=None)
@given(data=st.binary(min_size=1, max_size=4000) | st.text(max_size=2000).map(str.encode),
       form=st.sampled_from(sorted(FORMS)), cuts=st.lists(st.integers(0, 10_000), max_size=8))
def test_a_compressed_body_decodes_the_same_however_it_is_chunked(data, form, cuts):
    encoding, wbits = FORMS[form]
    body = Body(encoding, CAP)
    for chunk in chunks(packed(data, wbits), cuts):
        body.feed(chunk)
    assert body.finish() == data


@settings(max_examples=scaled(100), deadline=None)
@given(data=st.binary(min_size=64, max_size=4000), form=st.sampled_from(sorted(FORMS)),
       cuts=st.lists(st.integers(0, 10_000), max_size=4), keep=st.floats(0.05, 0.9))
def test_a_compressed_body_cut_short_is_refused(data, form, cuts, keep):
    encoding, wbits = FORMS[form]
    wire = packed(data, wbits)
    wire = wire[: max(1, int(len(wire) * keep))]
    body = Body(encoding, CAP)
    with pytest.raises(TransportError):
        for chunk in chunks(wire, cuts):
            body.feed(chunk)
        body.finish()


@settings(max_examples=scaled(100), deadline=None)
@given(data=st.binary(min_size=1, max_size=4000) | st.text(max_size=2000).map(str.encode),
       forms=st.lists(st.sampled_from(sorted(FORMS)), min_size=1, max_size=3),
       cuts=st.lists(st.integers(0, 10_000), max_size=8), keep=st.none() | st.floats(0.05, 0.9))
def test_stacked_codings_decode_in_reverse_order_or_are_refused_when_cut_short(data, forms, cuts, keep):
    """Content-Encoding: a, b means b(a(data)): undone last first, however chunked; cut short, refused."""
    wire = data
    for form in forms:
        wire = packed(wire, FORMS[form][1])
    body = Body(", ".join(FORMS[form][0] for form in forms), CAP)
    if keep is None:
        for chunk in chunks(wire, cuts):
            body.feed(chunk)
        assert body.finish() == data
    else:
        with pytest.raises(TransportError):
            for chunk in chunks(wire[: max(1, int(len(wire) * keep))], cuts):
                body.feed(chunk)
            body.finish()
