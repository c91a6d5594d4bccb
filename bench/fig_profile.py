"""Figure 10 — where the CPU of an answer goes: a py-spy profile of the hot path, by stage.

The workload of figure 2 (bench/fig_cpu.py): zero-latency upstreams, six real aeb pages per answer at
fresh URLs, `cache: bypass`, the extractive composer, one uvicorn worker. After a warm-up, a closed loop
at figure 2's concurrency runs while `py-spy record --nonblocking --gil` samples the service for
DURATION_S (raw collapsed stacks, with thread ids). With --gil each sampling round records the one thread
holding the GIL, if any: the CPU the Python code of the answer path uses, without counting the threads
that wait for the GIL (py-spy's default, "the OS shows the thread runnable", counts every one of the
extraction pool threads queued on the GIL as busy, and overstated the pool's share twofold in a trial).
A round in which no thread holds the GIL is idle: the event loop waiting in epoll (uvloop polls with the
GIL released) while no pool thread runs Python. Left out by construction: C code that releases the GIL
(lxml's parser, for one) and kernel time, which /proc's CPU time includes.

Each busy sample goes to a stage by its innermost app frame that belongs to a stage (STAGE_RULES:
shared helpers such as app/language/text.py are transparent, so their time goes to the stage calling
them); a sample with no such frame goes to a bucket by the library of its innermost frame
(LIBRARY_RULES). CPU ms per answer by stage = the stage's share of busy samples × the service's CPU ms
per answer measured in the same run (/proc user+system time of the service / answers).

    scripts/bench --only profile     # needs py-spy (the bench extra) and ptrace on the service
"""

from __future__ import annotations

import gzip
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path

from bench.common import REPO_ROOT
from bench.config import BenchConfig
from bench.loadgen import Sample, closed_loop
from bench.procs import ServiceProcess, UpstreamsProcess
from bench.workload import Workload

NAME = "profile"
TITLE = "10. CPU profile of the hot path, by stage"
WARM = 8
RATE_HZ = 200
DURATION_S = 25.0  # sampling window under load (quick: QUICK_DURATION_S)
QUICK_DURATION_S = 3.0
RAMP_S = 2.0  # load runs this long before sampling starts, and TAIL_S after it ends
TAIL_S = 1.0
MAX_ANSWERS_PER_S = 60  # sizes the workload so the loop cannot run out of fresh questions
TOP_FUNCTIONS = 15
RESULTS = REPO_ROOT / "bench" / "results"
RAW_NAME = "profile.collapsed.txt.gz"  # gzip: a full run's stacks are megabytes of text
# Innermost frames of a thread waiting, not working: a thread just woken (state R) is still in its wait.
WAIT_FRAMES = {
    ("concurrent/futures/thread.py", "_worker"),  # a pool thread in work_queue.get()
    ("threading.py", "Condition.wait"),
    ("threading.py", "Event.wait"),
    ("queue.py", "Queue.get"),
    ("selectors.py", "EpollSelector.select"),
}

# (path prefix or file, stage), first match wins; an app file matching none is a shared helper.
STAGE_RULES: list[tuple[str, str]] = [
    ("app/pipeline/route.py", "route"),
    ("app/pipeline/plan.py", "plan"),
    ("app/pipeline/search.py", "search"),
    ("app/providers/search/", "search"),
    ("app/corpus/", "search"),
    ("app/pipeline/fetch.py", "fetch"),
    ("app/fetch/", "fetch"),
    ("app/pipeline/extract.py", "extract"),
    ("app/extract/", "extract"),
    ("app/pipeline/injection.py", "injection"),
    ("app/pipeline/select.py", "select/passages"),
    ("app/pipeline/passages.py", "select/passages"),
    ("app/pipeline/conflicts.py", "select/passages"),
    ("app/providers/rerank/", "select/passages"),
    ("app/pipeline/gate.py", "gate"),
    ("app/pipeline/answerability", "answerability"),  # answerability.py and answerability_features.py
    ("app/pipeline/composers/", "compose"),
    ("app/pipeline/stream.py", "compose"),
    ("app/pipeline/cite.py", "cite"),
    ("app/pipeline/verify.py", "verify/support"),
    ("app/pipeline/settle.py", "verify/support"),
    ("app/pipeline/judge.py", "verify/support"),
    ("app/language/support", "verify/support"),
    ("app/providers/llm/", "llm client"),
    ("app/cache/", "cache"),
    ("app/providers/cache/", "cache"),
    ("app/pipeline/orchestrator.py", "orchestration"),
    ("app/pipeline/context.py", "orchestration"),
    ("app/pipeline/result.py", "orchestration"),
    ("app/pipeline/policy.py", "orchestration"),
    ("app/pipeline/gather.py", "orchestration"),
    ("app/api/", "api/serialisation"),
    ("app/inspect/", "api/serialisation"),
    ("app/main.py", "api/serialisation"),  # the request-id middleware
    ("app/metrics_export.py", "api/serialisation"),  # the HTTP metrics middleware
]
APP_STAGES = list(dict.fromkeys(stage for _, stage in STAGE_RULES)) + ["app (shared helpers only)"]

# Samples without a stage frame: the innermost frame's top-level package.
LIBRARY_RULES: list[tuple[tuple[str, ...], str]] = [
    (("uvicorn", "h11", "httptools", "websockets", "uvloop", "app/server.py"), "HTTP server (uvicorn/h11/httptools)"),
    (("starlette", "fastapi"), "ASGI framework (starlette/fastapi)"),
    (("httpx", "httpcore", "anyio", "h2", "sniffio", "ssl.py", "socket.py"), "HTTP client (httpx/httpcore/anyio)"),
    (("asyncio", "selectors.py", "concurrent", "threading.py", "queue.py"), "event loop (asyncio/uvloop)"),
    (("pydantic", "pydantic_core"), "pydantic"),
    (("json", "orjson"), "json/orjson"),
]
LIBRARY_BUCKETS = [bucket for _, bucket in LIBRARY_RULES] + ["other"]

_FRAME_RE = re.compile(r"^(?P<func>.*) \((?P<file>[^()]*?)(?::(?P<line>\d+))?\)$")
_ERRORS_RE = re.compile(r"Errors: (\d+)")


def _py_spy() -> str | None:
    beside = Path(sys.executable).with_name("py-spy")  # the venv's, installed by the bench extra
    return str(beside) if beside.is_file() else shutil.which("py-spy")


def _ptrace_blocked() -> str | None:
    try:
        scope = Path("/proc/sys/kernel/yama/ptrace_scope").read_text().strip()
    except OSError:
        return None
    return "ptrace is disabled on this machine (kernel.yama.ptrace_scope=3)" if scope == "3" else None


def _skip(reason: str) -> dict:
    print(f"[bench] profile skipped: {reason}", file=sys.stderr, flush=True)
    return {"skipped": reason}


def _parse_frame(frame: str) -> tuple[str, str]:
    """'Class.method (pkg/mod.py:12)' -> ('pkg/mod.py', 'Class.method')."""
    m = _FRAME_RE.match(frame)
    return (m.group("file"), m.group("func")) if m else ("?", frame)


def _stage_of(path: str) -> str | None:
    return next((stage for prefix, stage in STAGE_RULES if path.startswith(prefix)), None)


def _library_of(path: str) -> str:
    top = path.split("/", 1)[0]
    for names, bucket in LIBRARY_RULES:
        if top in names or path in names:
            return bucket
    return "other"


def classify(frames: list[tuple[str, str]]) -> str:
    """The stage (or library bucket) of one stack, frames outermost first."""
    has_app = False
    for path, _ in reversed(frames):
        if path.startswith("app/"):
            has_app = True
            if (stage := _stage_of(path)) is not None:
                return stage
    if not frames:
        return "other"
    path = frames[-1][0]
    if has_app and path.startswith("app/") and path != "app/server.py":
        return "app (shared helpers only)"
    return _library_of(path)


def aggregate(raw_text: str, main_tid: int | None = None) -> dict:
    """Busy samples by stage, by thread and by innermost function, from py-spy's raw (collapsed) output
    recorded with --threads: `thread (tid): name;outer (file:line);...;inner (file:line) count`. With --gil
    a sample is one sampling round's GIL holder."""
    stages: Counter[str] = Counter()
    functions: Counter[str] = Counter()
    others: Counter[str] = Counter()
    threads: Counter[str] = Counter()
    waiting = 0
    for line in raw_text.splitlines():
        stack, _, count_text = line.rpartition(" ")
        if not stack or not count_text.isdigit():
            continue
        count = int(count_text)
        main = False
        frames: list[tuple[str, str]] = []
        for frame in stack.split(";"):
            if frame.startswith("thread ("):
                tid, _, name = frame[len("thread (") :].partition(")")
                main = name == ": MainThread" or tid == str(main_tid)
            elif frame.startswith("process "):
                continue
            else:
                frames.append(_parse_frame(frame))
        if frames and frames[-1] in WAIT_FRAMES:
            waiting += count
            continue
        stage = classify(frames)
        stages[stage] += count
        threads["event loop (MainThread)" if main else "other threads"] += count
        if frames:
            path, func = frames[-1]
            functions[f"{path}:{func}"] += count
            if stage == "other":
                others[path.split("/", 1)[0]] += count
    return {
        "busy_samples": sum(stages.values()),
        "stages": dict(stages),
        "threads": dict(threads),
        "functions": dict(functions),
        "other_packages": dict(others.most_common(8)),
        "waiting_samples": waiting,
    }


def _record(py_spy: str, pid: int, out: Path, duration_s: float, children: bool) -> subprocess.CompletedProcess:
    cmd = [
        py_spy,
        "record",
        "--pid",
        str(pid),
        "--rate",
        str(RATE_HZ),
        "--format",
        "raw",
        "--output",
        str(out),
        "--duration",
        str(max(1, round(duration_s))),
        "--nonblocking",
        "--threads",
        "--gil",
    ]
    if children:
        cmd.append("--subprocesses")
    # py-spy falls behind on a busy machine and then takes longer than --duration
    return subprocess.run(cmd, capture_output=True, text=True, timeout=3 * duration_s + 60)


def run(cfg: BenchConfig) -> dict:
    py_spy = _py_spy()
    if py_spy is None:
        return _skip("py-spy is not installed (it is in the bench extra: scripts/bootstrap bench)")
    if blocked := _ptrace_blocked():
        return _skip(blocked)
    duration = QUICK_DURATION_S if cfg.quick else DURATION_S
    concurrency = cfg.cpu_concurrency
    load_s = RAMP_S + duration + TAIL_S
    n_load = int(load_s * MAX_ANSWERS_PER_S) + concurrency
    workload = Workload(n_requests=WARM + n_load)
    raw_dir = RESULTS / "quick" if cfg.quick else RESULTS
    raw_dir.mkdir(parents=True, exist_ok=True)
    raw_path = raw_dir / RAW_NAME
    tmp = tempfile.TemporaryDirectory(prefix="ga-profile-")
    tmp_raw = Path(tmp.name) / "profile.collapsed.txt"
    with tmp, UpstreamsProcess(workload) as up, ServiceProcess(dict(up.info["env"]), workers=1) as svc:
        url = svc.url + "/v1/chat/completions"
        closed_loop(url, [(i, workload.body(i)) for i in range(WARM)], min(WARM, 2))
        probe = subprocess.run(
            [py_spy, "dump", "--pid", str(svc.pid), "--nonblocking"], capture_output=True, text=True, timeout=60
        )
        if probe.returncode != 0:
            detail = " ".join((probe.stderr or probe.stdout).strip().splitlines()[-2:]) or "no message"
            return _skip(f"py-spy cannot read the service (ptrace not permitted?): exit {probe.returncode}, {detail}")
        jobs = [(i, workload.body(i)) for i in range(WARM, WARM + n_load)]
        loaded: dict[str, tuple[list[Sample], float]] = {}

        def send() -> None:  # the closed loop runs in a thread while py-spy samples
            loaded["out"] = closed_loop(url, jobs, concurrency, budget_s=load_s)

        cpu0 = svc.cpu_s()
        load = threading.Thread(target=send, name="profile-load")
        load.start()
        time.sleep(RAMP_S)
        children = len(svc.tree()) > 1
        rec = _record(py_spy, svc.pid, tmp_raw, duration, children)
        load.join()
        cpu1 = svc.cpu_s()
        if "out" not in loaded:
            raise RuntimeError("the load generator thread failed (its traceback is above)")
        if rec.returncode != 0 or not tmp_raw.is_file():
            return _skip(f"py-spy record failed ({rec.returncode}): {(rec.stderr or rec.stdout).strip()[-300:]}")
        raw_text = tmp_raw.read_text()
    with raw_path.open("wb") as fh, gzip.GzipFile(filename=RAW_NAME[:-3], mode="wb", fileobj=fh, mtime=0) as gz:
        gz.write(raw_text.encode())
    samples, wall = loaded["out"]
    ok = [s for s in samples if s.status == 200]
    statuses: dict[str, int] = {}
    for s in samples:
        key = s.grounding.get("status", f"http_{s.status}")
        statuses[key] = statuses.get(key, 0) + 1
    cpu_ms = (cpu1 - cpu0) * 1000 / max(1, len(ok))

    agg = aggregate(raw_text, main_tid=svc.pid)
    busy = max(1, agg["busy_samples"])
    m = _ERRORS_RE.search(rec.stdout + rec.stderr)
    errors = int(m.group(1)) if m else 0
    rounds = max(1, round(RATE_HZ * max(1, round(duration))) - errors)  # py-spy takes rate × duration rounds
    loop_busy = agg["threads"].get("event loop (MainThread)", 0)
    stages = [
        {
            "stage": name,
            "app": name in APP_STAGES,
            "samples": agg["stages"].get(name, 0),
            "share": agg["stages"].get(name, 0) / busy,
            "cpu_ms_per_answer": agg["stages"].get(name, 0) / busy * cpu_ms,
        }
        for name in APP_STAGES + LIBRARY_BUCKETS
    ]
    top = sorted(agg["functions"].items(), key=lambda kv: -kv[1])[:TOP_FUNCTIONS]
    return {
        "workers": 1,
        "composer": "extractive",
        "concurrency": concurrency,
        "rate_hz": RATE_HZ,
        "duration_s": max(1, round(duration)),
        "answers": len(ok),
        "load_wall_s": wall,
        "answers_per_s": len(ok) / wall,
        "service_cpu_ms_per_answer": cpu_ms,
        "service_cpu_cores": (cpu1 - cpu0) / wall,
        "statuses": statuses,
        "sampling": {
            "rounds": rounds,
            "errors": errors,
            "busy_samples": agg["busy_samples"],
            "waiting_samples": agg["waiting_samples"],
            "busy_by_thread": agg["threads"],
            "gil_held_share": min(1.0, agg["busy_samples"] / rounds),  # ~ cores of Python the service ran
            "event_loop_gil_share": loop_busy / rounds,
            "idle_share": max(0.0, 1 - agg["busy_samples"] / rounds),  # GIL free: the loop in epoll, no thread busy
        },
        "stages": stages,
        "other_packages": agg["other_packages"],
        "top_functions": [{"function": f, "samples": n, "share": n / busy} for f, n in top],
        "raw_file": str(raw_path.relative_to(REPO_ROOT)),
        "command": f"py-spy record --pid <service> --rate {RATE_HZ} --format raw --nonblocking --threads --gil "
        f"--duration {max(1, round(duration))}" + (" --subprocesses" if children else ""),
    }


def render(res: dict) -> str:
    if res.get("skipped"):
        return f"Skipped: {res['skipped']}."
    s = res["sampling"]
    lines = [
        f"The workload of figure 2 (zero-latency upstreams, six real aeb pages per answer at fresh URLs, "
        f"`cache: bypass`, {res['composer']} composer, {res['workers']} worker) in a closed loop at concurrency "
        f"{res['concurrency']}, sampled by `{res['command']}` ({res['duration_s']} s at {res['rate_hz']} Hz; raw "
        f"collapsed stacks in `{res['raw_file']}`: `zcat` it into flamegraph.pl or speedscope). In the same run: "
        f"{res['answers']} answers at {res['answers_per_s']:.1f} answers/s, **{res['service_cpu_ms_per_answer']:.1f} "
        f"service CPU ms per answer**, {res['service_cpu_cores']:.2f} cores; statuses {res['statuses']}.",
        "",
        f"A busy sample is the thread holding the GIL in a sampling round (`--gil`; threads queued on the GIL "
        f"are not counted). **Idle: no thread held the GIL in {s['idle_share']:.0%} of {s['rounds']} rounds** "
        f"(the event loop waiting in epoll, no pool thread running Python). The GIL was held in "
        f"{s['gil_held_share']:.0%} of rounds ({s['event_loop_gil_share']:.0%} by the event loop's thread; busy "
        f"samples by thread {s['busy_by_thread']}), against {res['service_cpu_cores']:.2f} cores of CPU from "
        "/proc, which also counts kernel time and C code running without the GIL. "
        f"{s.get('waiting_samples', 0)} samples in a wait (pool queue, condition) are left out. A sample belongs to the stage of its innermost "
        "app frame with a stage (shared helpers such as app/language/text.py count for their caller); samples "
        "with no app frame, to the library of their innermost frame. The shares are the robust part; the ms "
        "are share × CPU ms per answer, as noisy as the machine (2 shared cores).",
        "",
        "| stage | share of busy samples | CPU ms per answer (est.) |",
        "|---|---|---|",
    ]
    for row in res["stages"]:
        if row["samples"] or row["app"]:
            lines.append(f"| {row['stage']} | {row['share']:.1%} | {row['cpu_ms_per_answer']:.1f} |")
    app_share = sum(r["share"] for r in res["stages"] if r["app"])
    lines.append(
        f"| **all app stages** | **{app_share:.1%}** | **{app_share * res['service_cpu_ms_per_answer']:.1f}** |"
    )
    if res.get("other_packages"):
        lines += ["", "“other”, by package: " + ", ".join(f"{k} {v}" for k, v in res["other_packages"].items()) + "."]
    lines += [
        "",
        f"Top {len(res['top_functions'])} functions by self time (innermost frame, share of busy samples):",
        "",
        "| function (file:function) | self share |",
        "|---|---|",
    ]
    for f in res["top_functions"]:
        lines.append(f"| `{f['function']}` | {f['share']:.1%} |")
    return "\n".join(lines)
