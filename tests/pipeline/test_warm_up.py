"""Settings.warm_up: what the first requests would load inside them is loaded at start-up instead
(`python -m bench.warm_up` measures each first call). Each check runs in a fresh interpreter: the
test process has long loaded everything."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]


def _fresh(code: str) -> list[str]:
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO_ROOT, capture_output=True, text=True, timeout=120, check=True
    )
    return done.stdout.split()


def test_injection_warm_up_loads_the_model_and_the_language_identifier_when_an_encoder_reads():
    code = (
        "import sys\n"
        "from app.pipeline import injection\n"
        "before = (injection.model.cache_info().currsize, 'py3langid' in sys.modules)\n"
        "injection.use_encoder(object(), None)  # any reader: the identifier decides what it reads\n"
        "injection.warm_up()\n"
        "after = (injection.model.cache_info().currsize, 'py3langid' in sys.modules)\n"
        "print(*before, *after, '_dense' in vars(injection.model()))\n"
    )
    assert _fresh(code) == ["0", "False", "1", "True", "True"]


def test_without_an_encoder_the_language_identifier_stays_unloaded():
    code = (
        "import sys\n"
        "from app.pipeline import injection\n"
        "injection.use_encoder(None, None)\n"
        "injection.warm_up()\n"
        "print(injection.model.cache_info().currsize, 'py3langid' in sys.modules)\n"
    )
    assert _fresh(code) == ["1", "False"]


def test_fallback_warm_up_imports_trafilatura():
    code = (
        "import sys\n"
        "from app.extract.fallback import warm_up_fallback\n"
        "before = 'trafilatura' in sys.modules\n"
        "print(before, warm_up_fallback(), 'trafilatura' in sys.modules)\n"
    )
    assert _fresh(code) == ["False", "True", "True"]
