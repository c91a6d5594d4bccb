"""URL normalisation and registrable domains (Public Suffix List via tldextract's bundled snapshot)."""

from __future__ import annotations

import ipaddress
from functools import lru_cache
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import tldextract

# suffix_list_urls=() keeps tldextract offline: it uses the snapshot shipped in the wheel.
_EXTRACT = tldextract.TLDExtract(suffix_list_urls=(), cache_dir=None)

_TRACKING_PARAMS = frozenset(
    "fbclid gclid dclid gbraid wbraid msclkid mc_cid mc_eid yclid igshid _hsenc _hsmi mkt_tok "
    "ref ref_src ref_url cmpid spm si s_cid ncid ocid sr_share".split()
)


def _hostname(url: str) -> str:
    """The URL's host, lower-cased; "" for anything unparseable (an unclosed IPv6 bracket, a bad
    port): URLs come from search engines and pages, i.e. from strangers, so this never raises."""
    try:
        return (urlsplit(url).hostname or "").lower()
    except ValueError:
        return ""


def _port(parts) -> int | None:
    try:
        return parts.port
    except ValueError:  # "port 65536", "port x": no valid URL has it
        return None


@lru_cache(maxsize=4096)
def registrable_domain(url_or_host: str) -> str:
    host = _hostname(url_or_host) if "://" in url_or_host else url_or_host
    host = (host or "").strip(".").lower()
    if not host:
        return ""
    try:
        ipaddress.ip_address(host)
        return host  # an IP address is its own publisher
    except ValueError:
        pass
    ext = _EXTRACT(host)
    return ext.top_domain_under_public_suffix or host


def host_of(url: str) -> str:
    return _hostname(url)


def domain_matches(host: str, domains: list[str]) -> bool:
    """True when host is one of domains or a subdomain of one."""
    host = host.lower().strip(".")
    for d in domains:
        d = d.lower().strip(".")
        if host == d or host.endswith("." + d):
            return True
    return False


def normalize_domain(value: str) -> str:
    """Accept 'example.com', 'https://www.example.com/path', '.example.com'."""
    value = value.strip().lower()
    if "://" in value:
        value = _hostname(value)
    value = value.split("/")[0].strip(".")
    return value[4:] if value.startswith("www.") else value


def normalize_url(url: str) -> str:
    """A key under which copies of one page meet: scheme, www., default port, trailing slash,
    fragment, tracking parameters and AMP variants do not matter."""
    try:
        parts = urlsplit(url.strip())
    except ValueError:
        return url
    host = (parts.hostname or "").lower()
    if host.startswith("www."):
        host = host[4:]
    if host.startswith("amp."):
        host = host[4:]
    port = _port(parts)
    port = port if port not in (None, 80, 443) else None
    netloc = f"{host}:{port}" if port else host
    path = parts.path or "/"
    for amp in ("/amp/", "/amp"):
        if path.endswith(amp):
            path = path[: -len(amp)] or "/"
    if path.endswith(".amp.html"):
        path = path[: -len(".amp.html")] + ".html"
    if path.startswith("/amp/"):
        path = path[4:]
    path = path.rstrip("/") or "/"
    query = [
        (k, v)
        for k, v in parse_qsl(parts.query, keep_blank_values=True)
        if not k.lower().startswith("utm_")
        and k.lower() not in _TRACKING_PARAMS
        and not (k.lower() in ("amp", "outputtype") and v.lower() in ("1", "amp", "true", ""))
    ]
    return urlunsplit(("", netloc, path, urlencode(sorted(query)), "")).lstrip("/")
