"""Host and registrable-domain helpers for corpus URLs (offline: bundled public suffix list)."""
from __future__ import annotations

from functools import lru_cache
from urllib.parse import urlsplit

import tldextract

# suffix_list_urls=() keeps tldextract on its bundled snapshot: no download at run time.
_EXTRACT = tldextract.TLDExtract(suffix_list_urls=(), cache_dir=None)


def host_of(url: str) -> str:
    return (urlsplit(url).hostname or "").lower().strip(".")


@lru_cache(maxsize=4096)
def registrable_domain(host: str) -> str:
    """"docs.python.org" -> "python.org"; hosts without a public suffix (IPs, localhost) as is."""
    if not host:
        return ""
    return _EXTRACT(host).top_domain_under_public_suffix or host


def host_matches(host: str, domain: str) -> bool:
    """True when host is domain or one of its sub-domains."""
    domain = domain.lower().strip(".")
    return bool(domain) and (host == domain or host.endswith("." + domain))


def is_primary(url: str, primary_domains: list[str]) -> bool:
    host = host_of(url)
    if not host or not primary_domains:
        return False
    registrable = registrable_domain(host)
    return any(registrable == d or host_matches(host, d) for d in primary_domains)
