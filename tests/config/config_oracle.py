"""The reference build.toml parser (``kernels._rust.Build.open``) as a test oracle.

It reads ``<dir>/build.toml`` and prints its legacy-v4 warning straight to file
descriptor 2, so the warning is captured with ``os.dup2`` rather than
``contextlib.redirect_stderr``.
"""

from __future__ import annotations

import os
import re
import tempfile

import attrs


@attrs.frozen
class Verdict:
    ok: bool
    backends: tuple[str, ...] = ()
    legacy_v4: bool = False
    error: str = ""
    # backend -> ((repo_id, "version" | "revision", value), ...) for every backend
    kernel_depends: tuple[tuple[str, tuple[tuple[str, str, str], ...]], ...] = ()


BACKENDS = ("cann", "cpu", "cuda", "metal", "neuron", "rocm", "tpu", "xpu")
_KERNEL_VERSION = re.compile(r'KernelVersion\.(Version|Revision)\((?:version|revision)="?(.*?)"?\)$')


def _reference_deps(build) -> tuple:  # type: ignore[no-untyped-def]
    from kernels._rust import Backend

    out = []
    for name in BACKENDS:
        deps = []
        for dep in build.all_kernel_depends(Backend.from_str(name)):
            match = _KERNEL_VERSION.match(repr(dep.version))
            assert match, repr(dep.version)
            deps.append((dep.repo_id, match[1].lower(), match[2]))
        out.append((name, tuple(deps)))
    return tuple(out)


def reference(text: str) -> Verdict:
    from kernels._rust import Build

    with tempfile.TemporaryDirectory() as tmp:
        with open(os.path.join(tmp, "build.toml"), "w", encoding="utf-8") as handle:
            handle.write(text)
        with tempfile.TemporaryFile() as captured:
            saved = os.dup(2)
            os.dup2(captured.fileno(), 2)
            try:
                build = Build.open(tmp)
                ok, backends, error = True, tuple(str(b).lower() for b in build.general.backends), ""
                deps = _reference_deps(build)
            except ValueError as exc:
                ok, backends, error, deps = False, (), str(exc), ()
            finally:
                os.dup2(saved, 2)
                os.close(saved)
            captured.seek(0)
            stderr = captured.read().decode("utf-8", "replace")
    return Verdict(ok, backends, "legacy v4 format" in stderr, error, deps)


def ours(text: str) -> tuple[Verdict, list[str]]:
    """Our verdict and our warning messages."""
    from kernel_builder.config import parse
    from kernel_builder.errors import ConfigError

    try:
        parsed = parse(text)
    except ConfigError as exc:
        return Verdict(False, error=str(exc)), []
    from kernel_builder.config.model import Backend

    general = parsed.build.general
    deps = tuple(
        (name, tuple((d.repo_id, "version" if d.version is not None else "revision", str(d.version if d.version is not None else d.revision)) for d in (general.kernel_depends + general.backend_kernel_depends(Backend(name)))))
        for name in BACKENDS
    )
    backends = tuple(b.value for b in general.backends)
    return Verdict(True, backends, parsed.edition == 4, kernel_depends=deps), [w.message for w in parsed.warnings]
