"""Install one case's simulated web on the local test servers (WebServer + SearxngServer).

Each site of a case gets its own loopback address (its own registrable domain for the service);
the search server answers every query with the case's `default` list unless a query is scripted
exactly. The installed web remembers each page's text so the metrics can check claims against it.
"""

from __future__ import annotations

import html
from dataclasses import dataclass, field
from datetime import date

from eval.cases import Case, PageSpec, fill_dates, resolve_date
from simulators import SearxngServer, WebServer
from simulators.searxng import searx_result


@dataclass
class InstalledWeb:
    """Where the case's pages ended up: site name → base URL and address, page URL → its text."""

    site_urls: dict[str, str] = field(default_factory=dict)
    site_hosts: dict[str, str] = field(default_factory=dict)  # site name → IP (the service's "domain")
    page_text: dict[str, str] = field(default_factory=dict)  # URL → title + paragraphs as served
    page_dates: dict[str, str | None] = field(default_factory=dict)

    def url_of(self, ref: str) -> str:
        """'news-a.test/path' → the page's URL ('http…' refs pass through)."""
        if ref.startswith("http"):
            return ref
        site, _, path = ref.partition("/")
        return self.site_urls[site] + "/" + path

    def domain_of(self, name: str) -> str:
        """A site name in grounding options (primary_domains, …) → the address the service sees."""
        return self.site_hosts.get(name, name)


def _plain_html(title: str, paragraphs: list[str]) -> str:
    body = "\n".join(f"<p>{html.escape(p)}</p>" for p in paragraphs)
    return (
        f"<!doctype html><html><head><title>{html.escape(title)}</title></head>"
        f"<body><h1>{html.escape(title)}</h1>\n{body}</body></html>"
    )


def _install_page(web: WebServer, spec: PageSpec, case: Case, today: date, out: InstalledWeb) -> None:
    site = web.site(spec.site)
    out.site_urls[spec.site] = site.url
    out.site_hosts[spec.site] = site.ip
    if spec.kind == "robots":  # the site's robots.txt, one directive per paragraph
        site.set_robots("\n".join(spec.paragraphs) + "\n")
        return
    if spec.kind == "real":  # a real page's own HTML, dates and all
        from eval.real_pages import aeb_html

        url = site.add_page(spec.path, aeb_html(spec.aeb or ""), content_type="text/html")
        out.page_text[url] = "\n\n".join([spec.title, *spec.paragraphs])
        out.page_dates[url] = None
        return
    title = fill_dates(spec.title, today)
    paragraphs = [fill_dates(p, today) for p in spec.paragraphs]
    published = resolve_date(spec.published, case.as_of, today)
    modified = resolve_date(spec.modified, case.as_of, today)
    kw = {"headers": spec.headers} if spec.headers else {}
    if spec.kind == "article":
        url = site.add_article(spec.path, title, paragraphs, published=published, modified=modified, **kw)
    elif spec.kind == "hostile":
        if spec.instruction:
            kw["instruction"] = spec.instruction
        url = site.add_hostile(spec.path, title, paragraphs, published=published, **kw)
    elif spec.kind == "text":
        url = site.add_page(
            spec.path, "\n\n".join([title, *paragraphs]), content_type="text/plain; charset=utf-8", **kw
        )
    else:  # plain: no dates anywhere, no article markup
        url = site.add_page(spec.path, _plain_html(title, paragraphs), **kw)
    out.page_text[url] = "\n\n".join([title, *paragraphs])
    out.page_dates[url] = published or modified


def _result(ref: str | dict, case: Case, installed: InstalledWeb, specs: dict[str, PageSpec], today: date) -> dict:
    item = {"page": ref} if isinstance(ref, str) else dict(ref)
    key = item.pop("page", None) or item.pop("url")
    url = installed.url_of(key)
    spec = specs.get(key)
    title = item.pop("title", None) or (fill_dates(spec.title, today) if spec else url)
    content = item.pop("content", None) or (fill_dates(spec.paragraphs[0], today)[:160] if spec else "")
    published = resolve_date(item.pop("published", None), case.as_of, today)
    return searx_result(url, title, content, published=published, **item)


def install_case_web(case: Case, web: WebServer, searxng: SearxngServer, today: date | None = None) -> InstalledWeb:
    """Reset both servers and load the case's pages and search answers."""
    today = today or date.today()
    web.reset()
    searxng.reset()
    installed = InstalledWeb()
    specs = {f"{p.site}{p.path}": p for p in case.pages}
    for spec in case.pages:
        _install_page(web, spec, case, today, installed)
    for query, refs in (case.search.get("queries") or {}).items():
        searxng.set_results(query, [_result(r, case, installed, specs, today) for r in refs])
    default = [_result(r, case, installed, specs, today) for r in case.search.get("default", [])]
    searxng.set_default(lambda q, params: list(default))
    return installed


def request_grounding(case: Case, installed: InstalledWeb) -> dict:
    """The case's grounding options with site names mapped to addresses; the search cache is
    bypassed so one case never answers from another case's results."""
    g = dict(case.grounding)
    for key in ("primary_domains", "include_domains", "exclude_domains"):
        if key in g:
            g[key] = [installed.domain_of(d) for d in g[key]]
    g.setdefault("cache", "bypass")
    return g
