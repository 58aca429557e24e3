"""The embedded model's calibration, kept once per machine rather than once per store.

Why: how fast the embedded model reads and writes is a fact of this machine, this build
of llama.cpp and this model file, not of a database. Kept only in the store, every fresh
store (a new `--db`, a new data folder, a test lab's own database) timed the model again
before its first run: 1.2-1.5 s of a 12-16 s one-shot CLI run (docs/PERFORMANCE.md). So a
calibration is also written to a small JSON file beside the model files, and a store with
no calls of its own starts from it (models/speeds.py: `calls_or_calibration`).

The file holds no text, only token counts and seconds. It is used only while what it was
measured on still holds (`machine_key`: the CPU, its core count, the llama.cpp version
and build, and the model file's size); anything else, or a file that cannot be read, is ignored and
the model is timed again. $RT_MACHINE_SPEEDS names the file (the tests give each test its
own, so one test's calibration never answers another's first run).
"""
from __future__ import annotations

import contextlib
import functools
import hashlib
import importlib.util
import json
import logging
import os
from pathlib import Path

from .bundled import models_dir, temporary_beside

log = logging.getLogger(__name__)
VERSION = 1  # of the file's layout


def path() -> Path:
    """$RT_MACHINE_SPEEDS, else `speeds.json` in the folder of the embedded model's files."""
    explicit = os.environ.get("RT_MACHINE_SPEEDS")
    return Path(explicit) if explicit else models_dir() / "speeds.json"


def _cpu_name() -> str:
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text(errors="replace").splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    import platform  # noqa: PLC0415

    return platform.processor() or platform.machine()


@functools.cache
def _llama_build() -> str:
    """Which build of llama.cpp's CPU code this is (a digest of its library): the same
    llama-cpp-python version built for AVX2 or for AVX-512 (scripts/setup) is another build."""
    spec = importlib.util.find_spec("llama_cpp")  # found, not imported (that loads the library)
    if spec is None or not spec.origin:
        return ""
    libs = sorted((Path(spec.origin).parent / "lib").glob("libggml-cpu*.so*")) or \
        sorted((Path(spec.origin).parent / "lib").glob("libllama*.so*"))
    return hashlib.sha256(libs[0].read_bytes()).hexdigest()[:16] if libs else ""


def machine_key(model: str) -> dict:
    """What a calibration was measured on. A change in any of these may change the speed."""
    from importlib.metadata import PackageNotFoundError, version  # noqa: PLC0415

    from . import registry  # noqa: PLC0415
    from .local import resolve_model_path  # noqa: PLC0415

    try:
        llama = version("llama-cpp-python")
    except PackageNotFoundError:
        llama = ""
    try:
        size = resolve_model_path(registry.model_name(model)).stat().st_size
    except Exception:  # no file yet: nothing kept can be matched to it
        size = -1
    return {"model": model, "model_bytes": size, "llama_cpp": llama, "build": _llama_build(),
            "cpu": _cpu_name(), "cores": os.cpu_count() or 0}


def read(model: str) -> list[dict]:
    """The calls of this model's kept calibration, if it was measured on what runs now."""
    try:
        kept = json.loads(path().read_text())
        entry = kept["models"][model]
        if kept.get("version") != VERSION or entry["key"] != machine_key(model):
            return []
        return list(entry["calls"])
    except (OSError, ValueError, KeyError, TypeError):  # none yet, or unreadable: time it again
        return []


def keep(model: str, calls: list[dict]) -> None:
    """Keep a calibration's calls (written whole, so a reader never sees half a file). A
    failure is logged, never raised: the calibration's result still serves this run."""
    try:
        target = path()
        target.parent.mkdir(parents=True, exist_ok=True)
        try:
            kept = json.loads(target.read_text())
            models = kept["models"] if kept.get("version") == VERSION else {}
        except (OSError, ValueError, KeyError, TypeError):
            models = {}
        models[model] = {"key": machine_key(model), "calls": calls}
        tmp = temporary_beside(target)
        try:
            tmp.write_text(json.dumps({"version": VERSION, "models": models}, indent=1))
            os.replace(tmp, target)
        finally:
            tmp.unlink(missing_ok=True)  # left only when the replace failed
    except OSError:
        log.warning("could not keep the model's calibration beside its files", exc_info=True)
