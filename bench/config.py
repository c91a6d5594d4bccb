"""Run configuration: sizes for a full run and for --quick (the smoke test's few-second pass)."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class BenchConfig:
    quick: bool = False
    repeats: int = 3
    # latency figure: requests per concurrency level (each level's count is a whole number of waves)
    latency_levels: dict[int, int] = field(default_factory=lambda: {1: 8, 16: 48, 64: 128})
    naive_requests: int = 4
    latency_scale: float = 1.0  # multiplies every simulated upstream latency (quick mode shrinks it)
    latency_workers: int = 2  # uvicorn workers for the latency figure: the targets are "on 2 cores"
    # cpu figure
    cpu_requests: int = 60
    cpu_concurrency: int = 8
    cpu_workers: tuple[int, ...] = (1, 2)
    cpu_composers: tuple[str, ...] = ("extractive", "llm")
    stage_requests: int = 20  # c=1 pass for the per-stage breakdown
    # cache figure
    cache_seconds: float = 5.0
    cache_connections: int = 16
    # token figure
    token_requests: int = 30
    # memory figure
    memory_requests: int = 64
    # extraction / dates: page limit (None = all)
    quality_limit: int | None = None
    # embedded figure (the shipped docs corpus, no upstreams): a closed loop at this concurrency, up to
    # this many requests or seconds of sending, per worker count; a fresh service per repeat (2, not 3:
    # each repeat is about a minute of CPU-bound answers)
    embedded_concurrency: int = 24
    embedded_requests: int = 200
    embedded_seconds: float = 30.0
    embedded_c1_requests: int = 12
    embedded_workers: tuple[int, ...] = (1, 2)
    embedded_repeats: int = 2

    @classmethod
    def make(cls, quick: bool) -> BenchConfig:
        if not quick:
            return cls()
        return cls(
            quick=True,
            repeats=1,
            latency_levels={1: 2, 4: 4},
            naive_requests=1,
            latency_scale=0.1,
            latency_workers=1,
            cpu_requests=8,
            cpu_concurrency=2,
            cpu_workers=(1,),
            cpu_composers=("extractive",),
            stage_requests=2,
            cache_seconds=1.0,
            cache_connections=2,
            token_requests=3,
            memory_requests=8,
            quality_limit=4,
            embedded_concurrency=2,
            embedded_requests=4,
            embedded_seconds=10.0,
            embedded_c1_requests=2,
            embedded_workers=(1,),
            embedded_repeats=1,
        )
