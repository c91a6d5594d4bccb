"""The answer inspector: a page served at GET /inspect (app/api/inspect.py) to ask a question, read
the cited answer marker by marker, and trace every decision. Its static files live in `static/`;
`fates.py` says what happened to each search result, for the stored trace."""
