"""Long-lived clients, built once in the lifespan and reached through small dependencies."""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, field

import httpx

from app.cache.extraction_memo import ExtractionMemo
from app.cache.singleflight import SingleFlight
from app.cpu_queue import CpuQueue
from app.fetch.base import Fetcher
from app.providers.breaker import BreakerBoard, BreakerConfig
from app.providers.cache.base import Cache, build_cache
from app.providers.entailment.base import EntailmentModel, build_entailment
from app.providers.llm.base import ChatModel
from app.providers.llm.probe import ModelProbe
from app.providers.llm.resilient import ResilientChatModel
from app.providers.rerank.base import Reranker, build_named_reranker, build_reranker
from app.providers.search.base import SearchProvider, build_search_provider
from app.providers.search.guarded import GuardedSearch
from app.settings import Settings
from app.tokens import TokenCounter

log = logging.getLogger(__name__)


def load_builtin_providers() -> None:
    """Built-ins register exactly like external plugins: by importing their modules."""
    import app.providers.cache.memory  # noqa: F401
    import app.providers.cache.redis  # noqa: F401
    import app.providers.entailment.bert_nli  # noqa: F401
    import app.providers.llm.openai_compat  # noqa: F401
    import app.providers.rerank.cross_encoder  # noqa: F401
    import app.providers.rerank.minilm  # noqa: F401
    import app.providers.rerank.static_embedding  # noqa: F401
    import app.providers.search.brave  # noqa: F401
    import app.providers.search.local_corpus  # noqa: F401
    import app.providers.search.searxng  # noqa: F401
    import app.providers.search.serper  # noqa: F401
    import app.providers.search.tavily  # noqa: F401


@dataclass
class ServiceState:
    settings: Settings
    http: httpx.AsyncClient
    fetcher: Fetcher
    search: list[SearchProvider]
    cache: Cache
    tokens: TokenCounter
    llm: ChatModel | None = None
    reranker: Reranker | None = None
    sentence_ranker: Reranker | None = None
    entailment: EntailmentModel | None = None  # GA_SUPPORT_MODEL: settles sentences lexical support left open
    flights: SingleFlight = field(default_factory=SingleFlight)
    extractions: ExtractionMemo = field(default_factory=ExtractionMemo)
    # Upstream resilience: a circuit breaker per search provider and per model; the /readyz model probe.
    breakers: BreakerBoard = field(default_factory=lambda: BreakerBoard(BreakerConfig()))
    model_probe: ModelProbe | None = None
    cpu: CpuQueue | None = None  # the stages' CPU-bound calls, most urgent first (None: to_thread)

    @classmethod
    async def build(cls, settings: Settings) -> ServiceState:
        from app.fetch.fetcher import PageFetcher

        load_builtin_providers()
        if settings.warm_up:
            from app.extract.dates import warm_up_dates
            from app.extract.fallback import warm_up_fallback

            await asyncio.to_thread(warm_up_dates)
            if settings.extract_fallback:
                await asyncio.to_thread(warm_up_fallback)
        # Operator-configured upstreams (search APIs, the model probe) use this client; result URLs
        # never do. Every request through it also passes its own timeout.
        http = httpx.AsyncClient(
            timeout=httpx.Timeout(settings.search_timeout_s, connect=min(2.0, settings.search_timeout_s)),
            trust_env=False,
            headers={"User-Agent": f"{settings.user_agent} (+{settings.contact_url})"},
        )
        breakers = BreakerBoard.from_settings(settings)
        search: list[SearchProvider] = []
        for name in settings.search_providers:
            provider = build_search_provider(name, settings, http)
            opener = getattr(provider, "astart", None)  # optional async warm-up hook
            if opener is not None:
                await opener()
            if getattr(provider, "remote", True):
                provider = GuardedSearch(provider, breakers.get("search", provider.name))
            search.append(provider)
        llm = ResilientChatModel.build(settings, breakers) if settings.llm_enabled else None
        if llm is not None:
            for model in dict.fromkeys([settings.planner_model, settings.composer_model, settings.llm_fallback_model]):
                if model:
                    breakers.get("llm", model)  # exported (closed) from the start, listed by /readyz
        return cls(
            settings=settings,
            http=http,
            fetcher=PageFetcher.from_settings(settings),
            search=search,
            cache=build_cache(settings),
            tokens=TokenCounter.for_settings(settings),
            llm=llm,
            reranker=build_reranker(settings),
            sentence_ranker=build_named_reranker(settings.sentence_ranker, settings),
            entailment=build_entailment(settings),
            breakers=breakers,
            extractions=ExtractionMemo(settings.extraction_memo_max_bytes),
            model_probe=ModelProbe.from_settings(settings, http) if settings.llm_enabled else None,
            cpu=await _cpu_queue(settings),
        )

    async def _close_cpu(self) -> None:
        assert self.cpu is not None
        await asyncio.to_thread(self.cpu.close)

    async def aclose(self) -> None:
        for closer in [
            *(p.aclose for p in self.search),
            self.fetcher.aclose,
            self.cache.aclose,
            *([self.llm.aclose] if self.llm else []),
            self.http.aclose,
            *([self._close_cpu] if self.cpu else []),
        ]:
            try:
                await closer()
            except Exception:
                log.exception("error while closing")


async def _cpu_queue(settings: Settings) -> CpuQueue | None:
    """The CPU queue, and its extraction processes started (forked and warm) before the first request."""
    if settings.cpu_threads <= 0:
        return None
    processes = None
    if settings.extract_processes > 0:
        from app.cpu_processes import CpuProcesses

        # The fork server imports the extractors once, warm; its children inherit them (copy-on-write).
        processes = CpuProcesses(settings.extract_processes, preload=["app.pipeline.extract_child"])
        await asyncio.to_thread(processes.start)
    return CpuQueue(settings.cpu_threads, processes)
