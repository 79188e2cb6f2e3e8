"""Run a kernel's ``benchmarks/benchmark*.py`` scripts and time them (``kernel-builder benchmark``).

A script defines subclasses of ``kernel_builder.benchmark.Benchmark`` (PyPI ``kernels``'
``Benchmark`` is accepted too, so scripts written for ``kernels benchmark`` run unchanged).
Each ``benchmark_<workload>`` method is one workload: a fresh instance gets the loaded
kernel and the device, is seeded, set up (``setup_<workload>`` if present, else ``setup``),
verified against ``verify_<workload>`` when the class has one (whose timing is the
reference the speedup is measured against), warmed up and timed. Scripts are read only
from inside the kernel directory: a symlink out of it, a FIFO or a device is refused before
anything is opened, and the source compiled is exactly the bytes read.
"""

from __future__ import annotations

import fnmatch
import math
import os
import random
import sys
import time
import traceback
import types
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import attrs

from kernel_builder._files import UnsafeFile, check_inside, read_regular
from kernel_builder.errors import ConfigError, KernelBuilderError

__all__ = [
    "BenchmarkError",
    "Timing",
    "Workload",
    "benchmark_classes",
    "device_for",
    "find_scripts",
    "load_script",
    "run_class",
    "summarize",
]

#: Where the scripts live in a kernel repo, and which files there are scripts.
DIRECTORY = "benchmarks"
PATTERN = "benchmark*.py"

#: The modules whose ``Benchmark`` a script's classes may subclass (ours, PyPI ``kernels``').
BASE_MODULES = frozenset({"kernel_builder.benchmark", "kernels.benchmark", "kernels._internals.benchmark"})

#: Backend name -> torch device type (the others are their own device type).
_DEVICES = {"rocm": "cuda", "metal": "mps", "cann": "npu"}


class BenchmarkError(KernelBuilderError):
    """A benchmark workload failed while it ran (its setup, its kernel call or its check)."""

    exit_code = 1


@attrs.frozen
class Timing:
    """Statistics of one series of calls, in milliseconds (``std`` is the population one)."""

    iterations: int
    mean_ms: float
    std_ms: float
    min_ms: float
    max_ms: float

    def to_json(self) -> dict[str, Any]:
        return {k: v if k == "iterations" else round(v, 4) for k, v in attrs.asdict(self).items()}


@attrs.frozen
class Workload:
    """One ``benchmark_<name>`` method's result: its timing, and its reference's when the class
    defines ``verify_<name>`` (``verified`` is then True: a mismatch stops the run)."""

    script: str
    cls: str
    name: str
    timing: Timing
    reference: Timing | None = None
    verified: bool | None = None

    @property
    def speedup(self) -> float | None:
        """Reference mean over kernel mean (> 1: the kernel is faster)."""
        if self.reference is None or self.timing.mean_ms <= 0:
            return None
        return self.reference.mean_ms / self.timing.mean_ms

    def to_json(self) -> dict[str, Any]:
        """The JSON form; times in ms and the speedup rounded to 4 decimals (as PyPI ``kernels``)."""
        speedup = self.speedup
        return {
            "script": self.script,
            "benchmark": self.cls,
            "workload": self.name,
            "timing": self.timing.to_json(),
            "reference": None if self.reference is None else self.reference.to_json(),
            "speedup": None if speedup is None else round(speedup, 4),
            "verified": self.verified,
        }


def summarize(times_ms: Sequence[float]) -> Timing:
    """The statistics of ``times_ms`` (at least one sample)."""
    if not times_ms:
        raise ValueError("no samples")
    mean = math.fsum(times_ms) / len(times_ms)
    variance = math.fsum((t - mean) ** 2 for t in times_ms) / len(times_ms)
    return Timing(len(times_ms), mean, math.sqrt(variance), min(times_ms), max(times_ms))


def device_for(backend: str) -> str:
    """The torch device type benchmarks run on for a machine's backend (``rocm`` runs as ``cuda``)."""
    return _DEVICES.get(backend, backend)


def find_scripts(root: Path) -> list[Path]:
    """The ``benchmarks/benchmark*.py`` files of the kernel at ``root``, sorted by name.

    ``ConfigError`` when there are none, or when one (or ``benchmarks/`` itself) is a symlink
    out of ``root``, a dangling link, a FIFO, socket or device."""
    directory = root / DIRECTORY
    what = "the kernel directory"
    try:
        if not directory.is_dir() and not directory.is_symlink():
            raise ConfigError(
                f"{root}: no {DIRECTORY}/ directory",
                hint=f"add {DIRECTORY}/{PATTERN.replace('*', '_NAME')} with a Benchmark subclass (docs/cli-loader.md, benchmark)",
            )
        check_inside(directory, root, what=what)
        scripts = []
        for name in sorted(os.listdir(directory)):
            if fnmatch.fnmatchcase(name, PATTERN):
                check_inside(directory / name, root, what=what)
                scripts.append(directory / name)
    except UnsafeFile as exc:
        raise ConfigError(f"{exc.path}: {exc.reason}", hint="benchmark scripts must be regular files inside the kernel") from None
    if not scripts:
        raise ConfigError(f"{directory}: no {PATTERN} scripts", hint="name each script benchmark_<something>.py")
    return scripts


@contextmanager
def _working_directory(path: Path) -> Iterator[None]:
    previous = os.getcwd()
    os.chdir(path)
    try:
        yield
    finally:
        os.chdir(previous)


def _located(path: Path, exc: BaseException) -> str:
    """``path:line`` of the innermost frame of ``exc`` in ``path`` (``path`` if none)."""
    line = None
    for frame in traceback.extract_tb(exc.__traceback__):
        if frame.filename == str(path):
            line = frame.lineno
    return f"{path}:{line}" if line is not None else str(path)


def load_script(path: Path, root: Path) -> types.ModuleType:
    """Import the script at ``path`` (read as a regular file) as a fresh module, run from ``root``.

    ``ConfigError`` located at ``file:line:column`` for a syntax error, at ``file:line`` for
    an exception raised while the script's top level runs."""
    try:
        source = read_regular(path)
    except UnsafeFile as exc:
        raise ConfigError(f"{exc.path}: {exc.reason}", hint="benchmark scripts must be regular files inside the kernel") from None
    try:
        code = compile(source, str(path), "exec", dont_inherit=True)
    except SyntaxError as exc:
        where = f"{path}:{exc.lineno}:{exc.offset}" if exc.lineno else str(path)
        raise ConfigError(f"{where}: invalid Python: {exc.msg}", hint="fix the benchmark script") from None
    name = f"_kernel_builder_benchmark_{path.stem}"
    module = types.ModuleType(name)
    module.__file__ = str(path)
    sys.modules[name] = module  # dataclasses and pickling look classes up by module name
    try:
        with _working_directory(root):
            exec(code, module.__dict__)  # noqa: S102 - running the kernel's own benchmark is the point
    except Exception as exc:  # noqa: BLE001 - any failure of the script is a located error
        sys.modules.pop(name, None)
        raise ConfigError(
            f"{_located(path, exc)}: the script failed while it was imported: {type(exc).__name__}: {exc}",
            hint="run it with python to see the full traceback",
        ) from exc
    return module


def _is_benchmark(obj: object) -> bool:
    return isinstance(obj, type) and any(
        base.__name__ == "Benchmark" and base.__module__ in BASE_MODULES for base in obj.__mro__[1:]
    )


def benchmark_classes(module: types.ModuleType, path: Path) -> list[type]:
    """The Benchmark subclasses ``module`` defines itself (not those it imports), by name;
    ``ConfigError`` when there are none or one has no ``benchmark_*`` method."""
    found = [
        obj
        for _, obj in sorted(vars(module).items())
        if _is_benchmark(obj) and obj.__module__ == module.__name__
    ]
    if not found:
        raise ConfigError(
            f"{path}: defines no Benchmark subclass",
            hint="subclass kernel_builder.benchmark.Benchmark (or kernels.benchmark.Benchmark)",
        )
    for cls in found:
        if not _workloads(cls):
            raise ConfigError(f"{path}: {cls.__name__} has no benchmark_* method", hint="add def benchmark_<name>(self): ...")
    return found


def _workloads(cls: type) -> list[str]:
    return sorted(n[len("benchmark_") :] for n in dir(cls) if n.startswith("benchmark_") and callable(getattr(cls, n)))


def _synchronize(device: str) -> None:
    """Wait for queued device work, so that a timed call includes it."""
    import torch  # lazy: a benchmark needs torch; the module is importable without it

    if device == "cuda" and torch.cuda.is_available():
        torch.cuda.synchronize()
    elif device == "xpu" and hasattr(torch, "xpu") and torch.xpu.is_available():
        torch.xpu.synchronize()
    elif device == "mps" and torch.backends.mps.is_available():
        torch.mps.synchronize()


def _matches(out: Any, expected: Any) -> bool:
    import torch  # lazy: as above

    if isinstance(out, torch.Tensor) and isinstance(expected, torch.Tensor):
        return out.shape == expected.shape and bool(torch.allclose(out, expected, atol=1e-2))
    return bool(out == expected)


def _series(fn: Callable[[], Any], *, iterations: int, warmup: int, device: str, clock: Callable[[], float]) -> Timing:
    for _ in range(warmup):
        fn()
        _synchronize(device)
    times = []
    for _ in range(iterations):
        start = clock()
        fn()
        _synchronize(device)
        times.append((clock() - start) * 1000.0)
    return summarize(times)


def run_class(
    cls: type,
    *,
    kernel: Any,
    device: str,
    path: Path,
    iterations: int,
    warmup: int,
    clock: Callable[[], float] = time.perf_counter,
) -> list[Workload]:
    """Run every workload of ``cls`` (see the module docstring); ``BenchmarkError`` located at
    the script's line when a workload raises or its output does not match ``verify_<name>``."""
    import torch  # lazy: as above

    results = []
    for name in _workloads(cls):
        instance = cls()
        instance.kernel = kernel
        instance.device = device
        label = f"{cls.__name__}.{name}"
        try:
            if instance.seed is not None:
                random.seed(instance.seed)
                torch.manual_seed(instance.seed)  # seeds every device's generator too
            getattr(instance, f"setup_{name}", instance.setup)()
            run = getattr(instance, f"benchmark_{name}")
            verify = getattr(instance, f"verify_{name}", None)
            reference = None
            verified = None
            if verify is not None:
                run()
                _synchronize(device)
                if not _matches(instance.out, verify()):
                    raise BenchmarkError(
                        f"{path}: {label}: the kernel's output (self.out) does not match verify_{name}()",
                        hint="tensors are compared with torch.allclose(atol=1e-2), other values with ==",
                    )
                verified = True
                reference = _series(verify, iterations=iterations, warmup=warmup, device=device, clock=clock)
            timing = _series(run, iterations=iterations, warmup=warmup, device=device, clock=clock)
        except KernelBuilderError:
            raise
        except Exception as exc:  # noqa: BLE001 - the workload's own failure, located
            raise BenchmarkError(
                f"{_located(path, exc)}: {label} failed: {type(exc).__name__}: {exc}",
                hint="run the script's setup and benchmark_ methods by hand to see the full traceback",
            ) from exc
        results.append(Workload(path.name, cls.__name__, name, timing, reference, verified))
    return results
