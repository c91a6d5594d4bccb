"""Property tests (hypothesis): URL normalisation, address classification and citation parsing
hold their contracts on any input, not only on the examples the other tests list."""

from __future__ import annotations

import ipaddress

from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from app.domain.types import Evidence
from app.fetch.address import AddressPolicy, literal_address, non_public_reason
from app.pipeline.cite import MAX_REF_RANGE, expand_ref, parse_draft, render
from app.urls import host_of, normalize_url, registrable_domain

FAST = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# --- URL normalisation --------------------------------------------------------------------------

label = st.from_regex(r"[a-z0-9]([a-z0-9-]{0,10}[a-z0-9])?", fullmatch=True)
hosts = st.builds(
    lambda parts, tld: ".".join([*parts, tld]),
    st.lists(label, min_size=1, max_size=3),
    st.sampled_from(["com", "org", "co.uk", "de", "io"]),
)
paths = st.lists(st.from_regex(r"[A-Za-z0-9._~-]{1,8}", fullmatch=True), max_size=4).map(lambda p: "/" + "/".join(p))
params = st.lists(
    st.tuples(
        st.sampled_from(["q", "id", "utm_source", "fbclid", "page", "ref", "lang"]),
        st.from_regex(r"[a-z0-9]{0,6}", fullmatch=True),
    ),
    max_size=4,
)


@st.composite
def web_urls(draw):
    scheme = draw(st.sampled_from(["http", "https"]))
    www = draw(st.sampled_from(["", "www.", "WWW."]))
    host = draw(hosts)
    port = draw(st.sampled_from(["", ":80", ":443", ":8080"]))
    query = "&".join(f"{k}={v}" for k, v in draw(params))
    frag = draw(st.sampled_from(["", "#top", "#x-1"]))
    return f"{scheme}://{www}{host}{port}{draw(paths)}{'?' + query if query else ''}{frag}"


@FAST
@given(st.text())
def test_url_helpers_never_raise_on_any_text(text):
    for candidate in (text, "http://" + text, "https://[" + text, f"http://h.com:{text}/"):
        normalize_url(candidate)
        host_of(candidate)
        registrable_domain(candidate)


@FAST
@given(web_urls())
def test_normalize_url_is_idempotent_and_drops_tracking(url):
    once = normalize_url(url)
    assert normalize_url("http://" + once) == once
    assert "utm_" not in once and "fbclid" not in once
    assert not once.split("/")[0].startswith("www.")
    assert once.split("/")[0] == once.split("/")[0].lower()
    assert "#" not in once


@FAST
@given(web_urls(), st.sampled_from(["http", "https"]))
def test_scheme_and_www_do_not_change_the_key(url, scheme):
    rest = url.split("://", 1)[1]
    assume(not rest.lower().startswith("www."))
    assert normalize_url(f"{scheme}://www.{rest}") == normalize_url(url)


# --- address classification ----------------------------------------------------------------------

ipv4 = st.integers(min_value=0, max_value=2**32 - 1).map(ipaddress.IPv4Address)
ipv6 = st.integers(min_value=0, max_value=2**128 - 1).map(ipaddress.IPv6Address)


@FAST
@given(ipv4)
def test_every_non_global_ipv4_is_refused(ip):
    if not ip.is_global:
        assert non_public_reason(ip) is not None
    policy = AddressPolicy()
    assert policy.check_address(ip).allowed == (non_public_reason(ip) is None)


@FAST
@given(ipv4)
def test_ipv4_in_ipv6_forms_is_judged_by_the_ipv4(ip):
    v4_blocked = non_public_reason(ip) is not None
    for form in (f"::ffff:{ip}", f"64:ff9b::{ip}"):
        mapped = ipaddress.IPv6Address(form)
        if v4_blocked:
            assert non_public_reason(mapped) is not None, form


@FAST
@given(st.one_of(ipv4, ipv6))
def test_literal_address_round_trips_canonical_forms(ip):
    text = str(ip)
    assert literal_address(f"[{text}]" if ip.version == 6 else text) == ip


@FAST
@given(ipv6)
def test_ipv6_outside_global_unicast_is_refused(ip):
    if not ip.is_global and ip.ipv4_mapped is None:
        assert non_public_reason(ip) is not None


# --- citation parsing ----------------------------------------------------------------------------


def _evidence(n: int) -> list[Evidence]:
    return [
        Evidence(
            span_id=f"S{i}",
            url=f"https://site{i % 3}.example/p{i}",
            title=f"t{i}",
            domain=f"site{i % 3}.example",
            text=f"text {i}",
            published_at=None,
            date_source="unknown",
            fetched_at=None,
            score=1.0,
            primary=False,
            tokens=3,
        )
        for i in range(1, n + 1)
    ]


markers = st.builds(
    lambda a, b, sep: f"[S{a}{sep}S{b}]" if sep else f"[S{a}]",
    st.integers(0, 40),
    st.integers(0, 40),
    st.sampled_from(["", ", ", "-", "–", " and "]),
)
sentences = st.builds(
    lambda words, refs, end: " ".join(words) + "".join(refs) + end,
    st.lists(
        st.sampled_from(["Python", "3.13", "adds", "a", "new", "REPL", "price", "$30", "is"]), min_size=1, max_size=8
    ),
    st.lists(markers, max_size=3),
    st.sampled_from([".", "!", "?", ""]),
)


@FAST
@given(st.lists(sentences, min_size=1, max_size=6), st.integers(1, 12))
def test_parsed_claims_cite_only_existing_spans_and_render_consistent_offsets(parts, n):
    evidence = _evidence(n)
    valid = {e.span_id for e in evidence}
    answer = parse_draft(" ".join(parts), evidence)
    for claim in answer.claims:
        assert set(claim.span_ids) <= valid
        assert len(claim.span_ids) == len(set(claim.span_ids))
        assert "[S" not in claim.text
    assert all(ref not in valid for ref in answer.invalid_refs)
    answer.claims = [c for c in answer.claims if c.span_ids]
    rendered = render(answer, evidence)
    for claim in rendered.claims:
        assert rendered.content[claim.start : claim.end].startswith(claim.text.rstrip(".!?")[:10])
    assert len(rendered.cited) == len({e.url for e in rendered.cited})


@FAST
@given(st.text(max_size=200))
def test_parse_draft_never_raises(text):
    parse_draft(text, _evidence(5))


@FAST
@given(st.integers(0, 10**9), st.integers(0, 10**9))
def test_ranges_are_bounded(a, b):
    assert len(expand_ref(f"[S{a}-S{b}]")) <= MAX_REF_RANGE + 1
