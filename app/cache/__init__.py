"""Answer cache, page cache and single flight: what the service keeps between requests (over the
cache providers in app/providers/cache)."""
