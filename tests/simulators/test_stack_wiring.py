"""The fixtures compose: the real service searches the SearXNG server, fetches the test web
(directly by address, or by name through the proxy) and asks the LLM server. Assertions are on
what the upstreams received, not on the pipeline's judgement."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest

from simulators import searx_result

pytestmark = pytest.mark.skipif(
    not (Path(__file__).resolve().parents[2] / "app" / "main.py").exists(), reason="app/main.py is not written yet"
)

PARAGRAPHS = [
    "The Foo project released Foo 2.0 on 4 March 2025, its first major release in three years.",
    "Foo 2.0 adds a faster parser and drops support for Python 3.8, the maintainers said.",
    "The new parser is twice as fast on large files, and the old configuration format keeps "
    "working for one more release before it is removed.",
]


def _publish(web, by_name: bool) -> list[str]:
    urls = []
    for name, path in (("news-a.test", "/foo"), ("blog-b.test", "/foo-2")):
        site = web.site(name)
        site.add_article(path, "Foo 2.0 released", PARAGRAPHS, published=date(2025, 3, 4))
        urls.append(site.named_url(path) if by_name else site.url_for(path))
    return urls


@pytest.mark.parametrize("through_proxy", [False, True], ids=["direct", "proxy"])
async def test_service_uses_every_upstream(searxng, web, llm, proxy, service_factory, openai_client, through_proxy):
    urls = _publish(web, by_name=through_proxy)
    searxng.set_default(
        [
            searx_result(u, "Foo 2.0 released", "Foo 2.0 released on 4 March 2025", published="2025-03-04T00:00:00")
            for u in urls
        ]
    )
    llm.default = "Foo 2.0 was released on 4 March 2025 [S1][S2]."
    overrides = {
        **searxng.settings_overrides(),
        **llm.settings_overrides(),
        **web.settings_overrides(),
        "default_freshness_days": 100_000,
    }
    if through_proxy:
        overrides.update(proxy.settings_overrides())
    svc = service_factory(**overrides)
    reply = await openai_client(svc).chat.completions.create(
        model="grounded-answer", messages=[{"role": "user", "content": "When was Foo 2.0 released?"}]
    )

    assert reply.object == "chat.completion" and reply.choices[0].message.content
    assert searxng.queries(), "the service never searched"
    fetched = {(r.site, r.path) for r in web.requests.all()}
    assert {("news-a.test", "/foo"), ("blog-b.test", "/foo-2")} <= fetched
    assert any("Foo 2.0" in r.prompt_text for r in llm.requests.all())
    if through_proxy:
        assert set(urls) <= set(proxy.urls())
    else:
        assert proxy.requests.all() == []
