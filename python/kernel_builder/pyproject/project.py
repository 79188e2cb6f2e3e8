"""The files of the pip project ``create-pyproject`` writes for one variant.

The module's CMake project is the one a variant build generates (``driver.variant.make_plan``
and ``driver.generate.render``), planned with the kernel directory as its source; only the
kernel directory's path in it is replaced by ``${KB_KERNEL_DIR}``, which the top-level
CMakeLists.txt sets to its own directory, so the project keeps working when the kernel
directory moves. Around it: a top-level CMakeLists.txt (checks the torch, adds ``cmake/``),
setup.py (a setuptools ``build_ext`` that runs CMake) and pyproject.toml.
"""

from __future__ import annotations

import os
import re
from importlib import resources
from pathlib import Path

import attrs
import jinja2

from kernel_builder.config.model import Backend, Build
from kernel_builder.config.registry import registry
from kernel_builder.driver import generate
from kernel_builder.driver.generate import CompilePlan
from kernel_builder.driver.job import ToolchainInputs
from kernel_builder.driver.scratch import Scratch
from kernel_builder.driver.variant import make_plan
from kernel_builder.pyenv import Toolchain, probe_cuda
from kernel_builder.variants.names import Kind, Variant

__all__ = ["GENERATED_DIR", "KERNEL_DIR_VAR", "ProjectFiles", "project_files", "record_sources_as_built", "relocate"]

GENERATED_DIR = "cmake"  # the module's CMake project, registration.h and _ops.py
KERNEL_DIR_VAR = "${KB_KERNEL_DIR}"


@attrs.frozen
class ProjectFiles:
    """Relative POSIX path → text, and the plan the CMake project was made from."""

    files: dict[str, str]
    plan: CompilePlan


class _KernelDirScratch(Scratch):
    """``make_plan``'s view of the kernel directory: the sources are the kernel's own files
    (no copy), the generated files go under ``GENERATED_DIR``."""

    def __init__(self, kernel_dir: Path) -> None:
        super().__init__(kernel_dir / GENERATED_DIR, keep=True)
        self._kernel_dir = kernel_dir

    @property
    def src(self) -> Path:
        return self._kernel_dir


def relocate(plan: CompilePlan, kernel_dir: Path) -> CompilePlan:
    """``plan`` with every path under ``kernel_dir`` written relative to ``${KB_KERNEL_DIR}``."""
    prefix = re.compile(re.escape(kernel_dir.as_posix()) + r"(?=/|=|$)")

    def fix(value: object) -> object:
        if isinstance(value, str):
            return prefix.sub(lambda _: KERNEL_DIR_VAR, value)
        if isinstance(value, tuple):
            return tuple(fix(item) for item in value)
        return value

    return attrs.evolve(plan, **{f.name: fix(getattr(plan, f.name)) for f in attrs.fields(CompilePlan)})


def record_sources_as_built(plan: CompilePlan, kernel_dir: Path, scratch: Scratch) -> CompilePlan:
    """``plan`` with the kernel's sources recorded (``-ffile-prefix-map``) at the path a
    variant build records them: it compiles copies in its scratch directory's ``src/``, and
    its later scratch map wins over its source map. The module pip builds is then
    byte-identical to ``build --local``'s."""
    scratch_prefix = f"-ffile-prefix-map={scratch.path.as_posix()}="
    mapped = next((f[len(scratch_prefix):] for f in plan.cxx_flags if f.startswith(scratch_prefix)), None)
    if mapped is None:
        return plan
    in_scratch = Scratch(scratch.path, keep=False).src.relative_to(scratch.path).as_posix()
    source_prefix = f"-ffile-prefix-map={kernel_dir.as_posix()}="

    def fix(flag: str) -> str:
        body = flag.removeprefix("-Xcompiler=")
        if not body.startswith(source_prefix):
            return flag
        return flag[: len(flag) - len(body)] + f"{source_prefix}{mapped}/{in_scratch}"

    return attrs.evolve(plan, cxx_flags=tuple(map(fix, plan.cxx_flags)), cuda_flags=tuple(map(fix, plan.cuda_flags)))


def _template(name: str) -> jinja2.Template:
    text = resources.files("kernel_builder.pyproject").joinpath("templates", name).read_text()
    env = jinja2.Environment(keep_trailing_newline=True, undefined=jinja2.StrictUndefined, autoescape=False)
    return env.from_string(text)


def _dependencies(build: Build, backend: str, torch_requirement: str) -> list[str]:
    """The wheel's requirements: the torch it was built for and build.toml's python-depends."""
    table = registry()
    names = [(name, None) for name in build.general.python_depends]
    names += [(name, Backend(backend)) for name in build.general.backend_python_depends(Backend(backend))]
    packages = [pkg.pkg for name, scope in names for pkg in table.lookup(name, scope).python]
    return [torch_requirement, *dict.fromkeys(packages)]


def _torch_requirement(variant: Variant, toolchain: Toolchain) -> str:
    """A stable-ABI module loads with its torch and newer ones; any other only with its own."""
    major, minor = toolchain.torch_major_minor
    if variant.kind is Kind.STABLE_ABI:
        return f"torch>={major}.{minor}"
    return f"torch>={major}.{minor},<{major}.{minor + 1}"


def project_files(build: Build, kernel_dir: Path, variant: Variant, ops_id: str, toolchain: Toolchain) -> ProjectFiles:
    """Every file ``create-pyproject`` writes except compile_commands.json (made by running
    CMake on these). ``kernel_dir`` is absolute."""
    scratch = _KernelDirScratch(kernel_dir)
    plan = make_plan(build, variant, ops_id, scratch, toolchain, given=ToolchainInputs.from_environ(toolchain.python, os.environ))
    portable = relocate(record_sources_as_built(plan, kernel_dir, scratch), kernel_dir)
    module = generate.render(portable)
    major, minor = toolchain.torch_major_minor
    torch_requirement = _torch_requirement(variant, toolchain)
    toolkit = probe_cuda() if variant.backend == "cuda" else None
    facts = {
        "variant": variant.name,
        "name": build.name,
        "python_name": build.python_name,
        "backend": variant.backend,
        "ops_id": ops_id,
        "ext_dir": build.ext_dir,
        "torch": f"{major}.{minor}",
        "cuda": "" if variant.backend != "cuda" or toolchain.cuda_major_minor is None
        else "{}.{}".format(*toolchain.cuda_major_minor),
        "cuda_arch_list": plan.cuda_arch_list,
        "nvcc": toolkit.nvcc if toolkit else "",
        "cuda_home": toolkit.home if toolkit else "",
        "nvrtc": toolchain.nvrtc[0] if toolchain.nvrtc else "",
        "torch_requirement": torch_requirement,
        "version": str(build.general.version),
        "dependencies": _dependencies(build, variant.backend, torch_requirement),
        "data_patterns": [f"**/*.{ext}" for ext in build.pyext if ext != "py"],
    }
    files = {
        "pyproject.toml": _template("pyproject.toml.j2").render(**facts),
        "setup.py": _template("setup.py.j2").render(**facts),
        "CMakeLists.txt": _template("CMakeLists.txt.j2").render(**facts),
        # the module's CMake project whole: its CMakeLists.txt names every generated source
        # (the CUDA driver stub, tvm-ffi's compat unit, the Rust glue) beside it
        **{f"{GENERATED_DIR}/{name}": text for name, text in module.items()},
        f"{GENERATED_DIR}/_ops.py": generate.render_ops_py(name=build.name, backend=variant.backend, ops_id=ops_id),
    }
    return ProjectFiles(files, plan)
