"""What GA_WARM_UP moves from the first request to start-up, and what start-up costs with it.

    .venv/bin/python -m bench.warm_up

1. In a fresh interpreter, the CPU of the first call of htmldate's date parser on text no locale
   reads (every one of dateparser's locales is loaded), then of a second call.
2. The service as deployed (`python -m uvicorn app.main:app`, 1 worker, embedded defaults), started
   with GA_WARM_UP=false and =true, alternating, twice each: seconds until /healthz answers and the
   process's CPU seconds by then.
"""

from __future__ import annotations

import subprocess
import time

from bench.procs import PYTHON, ServiceProcess

FIRST_CALL = (
    "import time\n"
    "from htmldate.extractors import get_external_parser as g\n"
    "t = time.process_time(); g().get_date_data('zzz qqq'); a = time.process_time() - t\n"
    "t = time.process_time(); g().get_date_data('zzz qqq'); b = time.process_time() - t\n"
    "print(f'{a:.2f} {b:.3f}')\n"
)


def main() -> None:
    first, second = subprocess.run(
        [PYTHON, "-c", FIRST_CALL], capture_output=True, text=True, check=True
    ).stdout.split()
    print(f"dateparser, fresh process: first call {first} s CPU, second {second} s")
    for warm in ("false", "true", "false", "true"):
        start = time.monotonic()
        with ServiceProcess({"GA_WARM_UP": warm}) as svc:
            print(f"GA_WARM_UP={warm}: ready after {time.monotonic() - start:.2f} s, {svc.cpu_s():.2f} s CPU")


if __name__ == "__main__":
    main()
