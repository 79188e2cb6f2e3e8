"""A corpus of build.toml documents for the differential test against the reference parser.

Three parts, for edition 5 and again for edition 6: hand-written valid documents (every
framework, every backend, every edition-6 language, editions 4, 5 and 6), one invalid
document per rule, and structure-aware mutants of a full-featured document (drop a key,
change a value's type, add an unknown key, break a list item, swap a backend or a
language). Cases where kernel-builder deliberately differs from the reference carry the
name of that difference.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from typing import Any

import attrs
import tomlkit

# Deliberate differences from the reference parser (kernels._rust.Build.open):
UNKNOWN_PYTHON_DEPENDS = "unknown-python-depends-is-an-error"  # we reject, the reference accepts
KEBAB_NOARCH_KEYS = "kebab-noarch-keys-accepted"  # we accept, the reference rejects
KERNEL_BACKEND_NOT_LISTED = "kernel-backend-not-in-general-backends-warns"  # both accept; we warn
STRICT_V3_FRAMEWORK = "v3-framework-unknown-keys-are-errors"  # both reject; the reference calls it v3
PATHS_INSIDE = "source-paths-stay-inside-the-kernel"  # we reject, the reference accepts
PRE_V3 = "files-older-than-v3-get-hand-migration-steps"  # both reject; ours says what to write

DELIBERATE = {
    UNKNOWN_PYTHON_DEPENDS: "python-depends names outside the registry are errors at validation time",
    KEBAB_NOARCH_KEYS: "[torch-noarch] accepts the documented cuda-capabilities / rocm-archs spellings",
    KERNEL_BACKEND_NOT_LISTED: "a [kernel.X] whose backend is not in general.backends is a warning",
    STRICT_V3_FRAMEWORK: "unknown keys in a v3 [torch] / [tvm-ffi] table are errors (the reference ignores them)",
    PATHS_INSIDE: "src / include / cargo-manifest may not be absolute, empty or climb out with .. (the reference takes any string)",
    PRE_V3: "a file older than v3 is named as such, with the edition-6 keys to write (the reference lists its v4 and v3 mismatches)",
}


@attrs.frozen
class Case:
    name: str
    text: str
    deliberate: str | None = None


def toml(data: dict[str, Any]) -> str:
    return tomlkit.dumps(data)


def general(edition: int | None = 5, **extra: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"name": "relu", "version": 1}
    if edition is not None:
        out["edition"] = edition
    out["license"] = "Apache-2.0"
    out["backends"] = ["cuda"]
    out.update(extra)
    return out


def kernel(backend: str, **extra: Any) -> dict[str, Any]:
    return {"backend": backend, "depends": ["torch"], "src": [f"k_{backend}/k.cpp"], **extra}


BACKENDS = ["cann", "cpu", "cuda", "metal", "neuron", "rocm", "tpu", "xpu"]
KERNEL_BACKENDS = ["cpu", "cuda", "metal", "rocm", "xpu"]

FULL = {
    "general": {
        "name": "relu",
        "version": 2,
        "edition": 5,
        "license": "Apache-2.0",
        "upstream": "https://github.com/org/relu",
        "source": "git@github.com:org/relu-kernel.git",
        "backends": ["cuda", "rocm", "cpu", "xpu"],
        "python-depends": ["einops"],
        "kernel-depends": [{"repo-id": "org/dep", "version": 1}],
        "hub": {"repo-id": "org/relu", "branch": "main"},
        "cuda": {
            "minver": "12.6",
            "maxver": "13.0",
            "python-depends": ["nvidia-cutlass-dsl"],
            "kernel-depends": [{"repo-id": "org/cu", "revision": "abc123"}],
        },
        "xpu": {"python-depends": ["onednn"]},
    },
    "torch": {
        "src": ["torch-ext/torch_binding.cpp", "torch-ext/torch_binding.h"],
        "include": ["."],
        "pyext": ["py", "json"],
        "minver": "2.10",
        "maxver": "2.13",
        "cxx-flags": ["-O3"],
        "stable-abi": {"cuda": "2.11"},
    },
    "kernel": {
        "relu": kernel("cuda", **{"cuda-capabilities": ["8.0", "9.0a"], "cuda-flags": ["-lineinfo"], "cuda-minver": "12.0"}),
        "relu_rocm": kernel("rocm", **{"rocm-archs": ["gfx942"], "hip-flags": []}),
        "relu_cpu": kernel("cpu", include=["include"], **{"cxx-flags": ["-march=native"]}),
        "relu_xpu": kernel("xpu", **{"sycl-flags": []}),
    },
}


def valid_cases() -> Iterator[Case]:
    for backend in BACKENDS:
        yield Case(f"valid-noarch-{backend}", toml({"general": general(backends=[backend]), "torch-noarch": {}}))
    for backend in KERNEL_BACKENDS:
        doc = {"general": general(backends=[backend]), "torch": {"src": ["b.cpp"]}, "kernel": {"k": kernel(backend)}}
        yield Case(f"valid-torch-{backend}", toml(doc))
        doc = {"general": general(backends=[backend]), "tvm-ffi": {"src": ["b.cpp"]}, "kernel": {"k": kernel(backend)}}
        yield Case(f"valid-tvm-ffi-{backend}", toml(doc))
    yield Case("valid-full", toml(FULL))
    yield Case("valid-all-backends", toml({"general": general(backends=BACKENDS), "torch": {}}))
    yield Case(
        "valid-noarch-archs-snake",
        toml({"general": general(backends=["cuda", "rocm"]), "torch-noarch": {"cuda_capabilities": ["9.0"], "rocm_archs": ["gfx942"], "pyext": ["py"]}}),
    )
    yield Case("valid-stable-abi-string", toml({"general": general(), "torch": {"src": [], "stable-abi": "2.11"}}))
    yield Case(
        "valid-stable-abi-table",
        toml({"general": general(backends=["cuda", "rocm"]), "torch": {"stable-abi": {"cuda": "2.11", "rocm": "2.9"}}}),
    )
    yield Case("valid-empty-kernel-table", "[general]\nname='ab'\nversion=0\nedition=5\nlicense='x'\nbackends=['cpu']\n[torch]\n[kernel]\n")
    yield Case("valid-name-double-dash", toml({"general": general(name="my--kernel"), "torch-noarch": {}}))
    yield Case("valid-version-plus-and-spaces", toml({"general": general(), "torch": {"minver": " 2.10 ", "maxver": "+2.13"}}))
    yield Case("valid-empty-backends", toml({"general": general(backends=[]), "torch-noarch": {}}))
    yield Case("valid-tpu-neuron-sections", toml({"general": general(backends=["tpu", "neuron"], tpu={"python-depends": []}, neuron={"python-depends": ["nki"], "kernel-depends": []}), "torch-noarch": {}}))
    yield Case("valid-general-deps", toml({"general": general(**{"python-depends": ["einops", "helion", "tvm-ffi"]}), "torch-noarch": {}}))
    # edition 4 (no edition key): upgraded in memory
    yield Case("v4-torch", toml({"general": general(None, source="https://x.org/r.git"), "torch": {"src": ["a.cpp"], "cxx-flags": [], "stable-abi": "2.11"}, "kernel": {"k": kernel("cuda")}}))
    yield Case("v4-noarch-snake", toml({"general": general(None), "torch-noarch": {"cuda_capabilities": ["9.0"]}}))
    yield Case("v4-tvm-ffi", toml({"general": general(None, backends=["cpu"]), "tvm-ffi": {"src": ["a.cpp"]}}))
    yield Case("v4-general-cuda", toml({"general": general(None, cuda={"minver": "12.0", "python-depends": []}), "torch": {}}))
    # deliberate differences
    yield Case("diff-kebab-noarch", toml({"general": general(), "torch-noarch": {"cuda-capabilities": ["9.0"]}}), KEBAB_NOARCH_KEYS)
    yield Case("diff-kebab-noarch-rocm", toml({"general": general(backends=["rocm"]), "torch-noarch": {"rocm-archs": ["gfx942"]}}), KEBAB_NOARCH_KEYS)
    yield Case("diff-kebab-noarch-v4", toml({"general": general(None), "torch-noarch": {"cuda-capabilities": ["9.0"]}}), KEBAB_NOARCH_KEYS)
    yield Case("diff-python-depends-general", toml({"general": general(**{"python-depends": ["numpy"]}), "torch-noarch": {}}), UNKNOWN_PYTHON_DEPENDS)
    yield Case("diff-python-depends-backend", toml({"general": general(cuda={"python-depends": ["einops"]}), "torch-noarch": {}}), UNKNOWN_PYTHON_DEPENDS)
    yield Case("diff-python-depends-tpu", toml({"general": general(tpu={"python-depends": ["jax"]}), "torch-noarch": {}}), UNKNOWN_PYTHON_DEPENDS)
    yield Case("diff-kernel-backend-unlisted", toml({"general": general(backends=["cpu"]), "torch": {}, "kernel": {"k": kernel("cuda")}}), KERNEL_BACKEND_NOT_LISTED)


def invalid_cases() -> Iterator[Case]:
    base = {"general": general(), "torch": {"src": ["a.cpp"]}}

    def with_general(**extra: Any) -> str:
        doc = copy.deepcopy(base)
        doc["general"].update(extra)
        return toml(doc)

    yield Case("bad-toml-syntax", "[general\nname = 'x'\n")
    yield Case("bad-empty-file", "")
    yield Case("bad-no-general", toml({"torch": {}}))
    yield Case("bad-no-framework", toml({"general": general()}))
    yield Case("bad-two-frameworks", toml({"general": general(), "torch": {}, "tvm-ffi": {"src": []}}))
    yield Case("bad-unknown-top", toml({**base, "frobnicate": {}}))
    yield Case("bad-edition-6", with_general(edition=6))
    yield Case("bad-edition-string", with_general(edition="5"))
    yield Case("bad-edition-float", with_general(edition=5.0))
    yield Case("bad-name-uppercase", with_general(name="Relu_Kernel"))
    yield Case("bad-name-one-char", with_general(name="r"))
    yield Case("bad-name-trailing-dash", with_general(name="relu-"))
    yield Case("bad-version-negative", with_general(version=-1))
    yield Case("bad-version-string", with_general(version="1"))
    yield Case("bad-license-int", with_general(license=3))
    yield Case("bad-backend-unknown", with_general(backends=["gpu"]))
    yield Case("bad-backend-uppercase", with_general(backends=["CUDA"]))
    yield Case("bad-backends-string", with_general(backends="cuda"))
    yield Case("bad-upstream-scheme", with_general(upstream="ftp://example.com/r"))
    yield Case("bad-upstream-plain", with_general(upstream="github.com/a/b"))
    yield Case("bad-source-scp-absolute", with_general(source="git@github.com:/a/b"))
    yield Case("bad-general-rocm-section", with_general(rocm={}))
    yield Case("bad-hub-unknown", with_general(hub={"repo": "a/b"}))
    yield Case("bad-hub-int", with_general(hub={"repo-id": 1}))
    yield Case("bad-cuda-minver", with_general(cuda={"minver": "12.x"}))
    yield Case("bad-version-empty", with_general(cuda={"maxver": ""}))
    yield Case("bad-version-three-components", toml({"general": general(), "torch": {"minver": "2.10.0"}}))
    yield Case("bad-version-one-component", with_general(cuda={"minver": "12"}))
    yield Case("bad-stable-abi-three-components", toml({"general": general(), "torch": {"stable-abi": {"cuda": "2.11.0"}}}))
    yield Case("bad-version-int", with_general(cuda={"maxver": 12}))
    yield Case("bad-tpu-kernel-depends", with_general(tpu={"kernel-depends": []}))
    yield Case("bad-kernel-dep-both", with_general(**{"kernel-depends": [{"repo-id": "a/b", "version": 1, "revision": "x"}]}))
    yield Case("bad-kernel-dep-neither", with_general(**{"kernel-depends": [{"repo-id": "a/b"}]}))
    yield Case("bad-kernel-dep-version-string", with_general(**{"kernel-depends": [{"repo-id": "a/b", "version": "1"}]}))
    yield Case("bad-kernel-dep-unknown-key", with_general(**{"kernel-depends": [{"repo-id": "a/b", "version": 1, "rev": "x"}]}))
    yield Case("bad-python-depends-not-list", with_general(**{"python-depends": "einops"}))
    yield Case("bad-torch-src-string", toml({"general": general(), "torch": {"src": "a.cpp"}}))
    yield Case("bad-torch-unknown", toml({"general": general(), "torch": {"cuda-flags": []}}))
    yield Case("bad-stable-abi-backend", toml({"general": general(), "torch": {"stable-abi": {"gpu": "2.11"}}}))
    yield Case("bad-stable-abi-version", toml({"general": general(), "torch": {"stable-abi": "two"}}))
    yield Case("bad-v4-stable-abi-table", toml({"general": general(None), "torch": {"stable-abi": {"cuda": "2.11"}}}), STRICT_V3_FRAMEWORK)
    yield Case("bad-v4-kernel-depends", toml({"general": general(None, **{"kernel-depends": []}), "torch": {}}))
    yield Case("bad-v4-tpu", toml({"general": general(None, tpu={}), "torch": {}}))
    yield Case("bad-tvm-ffi-no-src", toml({"general": general(), "tvm-ffi": {}}))
    yield Case("bad-tvm-ffi-stable-abi", toml({"general": general(), "tvm-ffi": {"src": [], "stable-abi": "2.11"}}))
    yield Case("bad-noarch-unknown", toml({"general": general(), "torch-noarch": {"src": []}}))
    yield Case("bad-kernel-tpu", toml({**base, "kernel": {"k": kernel("tpu")}}))
    yield Case("bad-kernel-no-backend", toml({**base, "kernel": {"k": {"src": [], "depends": []}}}))
    yield Case("bad-kernel-no-depends", toml({**base, "kernel": {"k": {"backend": "cpu", "src": []}}}))
    yield Case("bad-kernel-no-src", toml({**base, "kernel": {"k": {"backend": "cpu", "depends": []}}}))
    yield Case("bad-kernel-cpp-dep", toml({**base, "kernel": {"k": kernel("cpu", depends=["boost"])}}))
    yield Case("bad-kernel-cuda-key-on-cpu", toml({**base, "kernel": {"k": kernel("cpu", **{"cuda-flags": []})}}))
    yield Case("bad-kernel-rocm-key-on-cuda", toml({**base, "kernel": {"k": kernel("cuda", **{"rocm-archs": []})}}))
    yield Case("bad-kernel-metal-flags", toml({**base, "kernel": {"k": kernel("metal", **{"metal-flags": []})}}))
    yield Case("bad-kernel-not-table", toml({**base, "kernel": {"k": 1}}))
    yield Case("bad-kernel-cuda-minver", toml({**base, "kernel": {"k": kernel("cuda", **{"cuda-minver": "x"})}}))
    yield Case("legacy-v3-minimal", "[general]\nname = 'relu'\nbackends = ['cuda']\n")
    yield Case("legacy-v3-torch", "[general]\nname = 'relu'\nlicense = 'MIT'\nbackends = ['cuda']\n[torch]\nsrc = ['a.cpp']\n")
    yield Case("bad-v3-source", "[general]\nname = 'relu'\nsource = 'https://a.org/b'\nbackends = ['cuda']\n")
    yield Case("legacy-v3-tvm-ffi-no-src", "[general]\nname = 'relu'\nbackends = ['cpu']\n[tvm-ffi]\n")
    yield Case("legacy-v3-kernel", "[general]\nname = 'relu'\nbackends = ['cuda']\n[kernel.k]\nbackend = 'cuda'\nsrc = []\ndepends = []\ncxx-flags = []\n")
    yield Case("legacy-v3-sections", "[general]\nname = 'relu'\nupstream = 'https://a.org/b'\nbackends = ['cuda']\n[general.hub]\nrepo-id = 'a/b'\n[general.cuda]\nminver = '12.0'\n")
    yield Case("legacy-v3-torch-extra-key", "[general]\nname = 'relu'\nbackends = ['cuda']\n[torch]\ncxx-flags = []\n", STRICT_V3_FRAMEWORK)
    yield Case("bad-v3-tpu", "[general]\nname = 'relu'\nbackends = ['cuda']\n[general.tpu]\n")
    yield Case("bad-v3-kernel-unknown", "[general]\nname = 'relu'\nbackends = ['cuda']\n[kernel.k]\nbackend = 'cuda'\nsrc = []\ndepends = []\nfrob = 1\n")
    yield Case("bad-v3-noarch-table", "[general]\nname = 'relu'\nbackends = ['cuda']\n[torch-noarch]\n")


# ---------------------------------------------------------------- mutants


def _paths(node: Any, prefix: tuple = ()) -> Iterator[tuple]:
    if isinstance(node, dict):
        for key, value in node.items():
            yield prefix + (key,)
            yield from _paths(value, prefix + (key,))


def _get(doc: Any, path: tuple) -> Any:
    for part in path:
        doc = doc[part]
    return doc


def _retyped(value: Any) -> Any:
    if isinstance(value, bool):
        return "yes"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        return 42
    if isinstance(value, list):
        return "not-a-list"
    return 7  # a table


def mutant_cases() -> Iterator[Case]:
    for path in _paths(FULL):
        name = ".".join(path)
        dropped = copy.deepcopy(FULL)
        del _get(dropped, path[:-1])[path[-1]]
        yield Case(f"mutant-drop-{name}", toml(dropped))
        retyped = copy.deepcopy(FULL)
        parent = _get(retyped, path[:-1])
        parent[path[-1]] = _retyped(parent[path[-1]])
        yield Case(f"mutant-retype-{name}", toml(retyped))
        value = _get(FULL, path)
        if isinstance(value, dict):
            extra = copy.deepcopy(FULL)
            _get(extra, path)["frobnicate"] = 1
            yield Case(f"mutant-unknown-in-{name}", toml(extra))
        if isinstance(value, list) and value and not isinstance(value[0], dict):
            broken = copy.deepcopy(FULL)
            _get(broken, path)[0] = 7
            yield Case(f"mutant-item-{name}", toml(broken))
        if path[-1] == "backend":
            for backend in BACKENDS:
                other = copy.deepcopy(FULL)
                _get(other, path[:-1])["backend"] = backend
                yield Case(f"mutant-backend-{name}-{backend}", toml(other))
    legacy = copy.deepcopy(FULL)
    del legacy["general"]["edition"]
    yield Case("mutant-no-edition-full", toml(legacy))


# ---------------------------------------------------------------- edition 6

LANGUAGES = ["cpp-cpu", "cpp-cuda", "cpp-rocm", "cpp-xpu", "cpp-metal", "rust-cpu", "rust-cuda-oxide", "rust-cutile"]
LANGUAGE_BACKEND = {lang: "cuda" if lang.startswith("rust-cu") else lang.split("-")[1] for lang in LANGUAGES}
CPP_EXTRA = {
    "cpp-cuda": {"cuda-capabilities": ["8.0", "9.0a"], "cuda-flags": ["-lineinfo"], "cuda-minver": "12.0"},
    "cpp-rocm": {"rocm-archs": ["gfx942"], "hip-flags": []},
    "cpp-xpu": {"sycl-flags": []},
}
RUST_EXTRA = {"rust-cuda-oxide": {"cuda-capabilities": ["8.0"]}, "rust-cutile": {"tileiras-minver": "13.2"}}


def general6(**extra: Any) -> dict[str, Any]:
    return general(6, **extra)


def component(kind: str, **extra: Any) -> dict[str, Any]:
    """A minimal valid edition-6 component of language ``kind`` (``extra`` may override any key)."""
    if kind.startswith("rust-"):
        return {"language": kind, "src": ["crate/src", "Cargo.lock"], "cargo-manifest": "crate/Cargo.toml", **extra}
    return {"language": kind, "depends": ["torch"], "src": [f"k_{kind}/k.cpp"], **extra}


FULL6 = {
    "general": {
        "name": "relu",
        "version": 2,
        "edition": 6,
        "license": "Apache-2.0",
        "upstream": "https://github.com/org/relu",
        "source": "git@github.com:org/relu-kernel.git",
        "backends": ["cuda", "rocm", "cpu", "xpu", "metal"],
        "build-layout": "zip",
        "python-depends": ["einops"],
        "kernel-depends": [{"repo-id": "org/dep", "version": 1}],
        "hub": {"repo-id": "org/relu", "branch": "main"},
        "cuda": {"minver": "12.6", "maxver": "13.0", "python-depends": [], "kernel-depends": [{"repo-id": "org/cu", "revision": "abc"}]},
        "xpu": {"python-depends": ["onednn"]},
    },
    "tvm-ffi": {"src": ["tvm-ffi-ext/binding.cpp"], "include": ["."], "pyext": ["py"], "cxx-flags": ["-O2"]},
    "kernel": {
        "relu_cuda": component("cpp-cuda", include=["include"], **{"cxx-flags": ["-O3"]}, **CPP_EXTRA["cpp-cuda"]),
        "relu_rocm": component("cpp-rocm", **CPP_EXTRA["cpp-rocm"]),
        "relu_xpu": component("cpp-xpu", **CPP_EXTRA["cpp-xpu"]),
        "relu_metal": component("cpp-metal", depends=["metal-cpp"]),
        "relu_rs": component("rust-cpu"),
        "relu_oxide": component("rust-cuda-oxide", **RUST_EXTRA["rust-cuda-oxide"]),
        "relu_tile": component("rust-cutile", **RUST_EXTRA["rust-cutile"]),
    },
}

TORCH6 = {
    "general": general6(backends=["cpu", "cuda"]),
    "torch": {"src": ["torch-ext/b.cpp"], "pyext": ["py", "json"], "minver": "2.10", "maxver": "2.14", "stable-abi": {"cuda": "2.11"}},
    "kernel": {"c": component("cpp-cpu", depends=["torch", "torch-stable-abi-shim"]), "g": component("cpp-cuda", **CPP_EXTRA["cpp-cuda"])},
}


def valid_cases6() -> Iterator[Case]:
    for language in LANGUAGES:
        backend = LANGUAGE_BACKEND[language]
        framework = "tvm-ffi" if language.startswith("rust-") else "torch"
        doc = {"general": general6(backends=[backend]), framework: {}, "kernel": {"k": component(language, **RUST_EXTRA.get(language, {}), **CPP_EXTRA.get(language, {}))}}
        yield Case(f"valid-e6-{language}", toml(doc))
        if framework == "torch":
            doc = {"general": general6(backends=[backend]), "tvm-ffi": {"src": ["b.cpp"]}, "kernel": {"k": component(language)}}
            yield Case(f"valid-e6-tvm-ffi-{language}", toml(doc))
    for backend in BACKENDS:
        yield Case(f"valid-e6-noarch-{backend}", toml({"general": general6(backends=[backend]), "torch-noarch": {}}))
    yield Case("valid-e6-full", toml(FULL6))
    yield Case("valid-e6-torch", toml(TORCH6))
    yield Case("valid-e6-layout-files", toml({"general": general6(**{"build-layout": "files"}), "torch": {}}))
    yield Case("valid-e6-tvm-ffi-empty", toml({"general": general6(backends=["cpu"]), "tvm-ffi": {}}))
    yield Case("valid-e6-mlx", toml({"general": general6(backends=["metal"]), "mlx-noarch": {"pyext": ["py"]}}))
    yield Case("valid-e6-mlx-no-backends", toml({"general": general6(backends=[]), "mlx-noarch": {}}))
    yield Case("valid-e6-mlx-metal-component", toml({"general": general6(backends=["metal"]), "mlx-noarch": {}, "kernel": {"m": component("cpp-metal")}}))
    yield Case("valid-e6-cutile-newer", toml({"general": general6(), "tvm-ffi": {}, "kernel": {"t": component("rust-cutile", **{"tileiras-minver": " 13.10 "})}}))
    yield Case("valid-e6-noarch-archs", toml({"general": general6(backends=["cuda", "rocm"]), "torch-noarch": {"cuda_capabilities": ["9.0"], "rocm_archs": ["gfx942"]}}))
    yield Case("valid-e6-tpu-neuron", toml({"general": general6(backends=["tpu", "neuron"], tpu={"python-depends": []}, neuron={"kernel-depends": []}), "torch-noarch": {}}))
    yield Case("valid-e6-empty-kernel-table", "[general]\nname='ab'\nversion=0\nedition=6\nlicense='x'\nbackends=['cpu']\n[torch]\n[kernel]\n")
    yield Case(
        "diff-e6-unlisted-language-backend",
        toml({"general": general6(backends=["cpu"]), "torch": {}, "kernel": {"k": component("cpp-cuda")}}),
        KERNEL_BACKEND_NOT_LISTED,
    )
    yield Case("diff-e6-python-depends", toml({"general": general6(**{"python-depends": ["numpy"]}), "torch": {}}), UNKNOWN_PYTHON_DEPENDS)
    yield Case("diff-e6-kebab-noarch", toml({"general": general6(), "torch-noarch": {"cuda-capabilities": ["9.0"]}}), KEBAB_NOARCH_KEYS)


def invalid_cases6() -> Iterator[Case]:
    def with_kernel(framework: str, kernel_table: dict[str, Any], **general_extra: Any) -> str:
        return toml({"general": general6(**general_extra), framework: {}, "kernel": {"k": kernel_table}})

    rust = component("rust-cpu")
    yield Case("bad-e6-edition-7", toml({"general": general(7), "torch": {}}))
    yield Case("bad-e6-edition-4-written", toml({"general": general(4), "torch": {}}))
    yield Case("bad-e6-edition-0", toml({"general": general(0), "torch": {}}))
    yield Case("bad-e6-backend-tag", with_kernel("torch", kernel("cpu")))
    yield Case("bad-e6-backend-and-language", with_kernel("torch", {**component("cpp-cpu"), "backend": "cpu"}))
    yield Case("bad-e6-no-language", with_kernel("torch", {"src": [], "depends": []}))
    yield Case("bad-e6-language-unknown", with_kernel("torch", component("cpp-cpu", language="cpp-tpu")))
    yield Case("bad-e6-language-uppercase", with_kernel("torch", component("cpp-cpu", language="CPP-CPU")))
    yield Case("bad-e6-language-int", with_kernel("torch", component("cpp-cpu", language=1)))
    yield Case("bad-e6-language-v1-cuda", with_kernel("torch", component("cpp-cpu", language="cuda")))
    yield Case("bad-e6-cpp-no-depends", with_kernel("torch", {"language": "cpp-cpu", "src": []}))
    yield Case("bad-e6-cpp-no-src", with_kernel("torch", {"language": "cpp-cpu", "depends": []}))
    yield Case("bad-e6-cpp-cargo-manifest", with_kernel("torch", component("cpp-cpu", **{"cargo-manifest": "C.toml"})))
    yield Case("bad-e6-cpp-tileiras", with_kernel("torch", component("cpp-cuda", **{"tileiras-minver": "13.2"})))
    yield Case("bad-e6-cpu-cuda-flags", with_kernel("torch", component("cpp-cpu", **{"cuda-flags": []})))
    yield Case("bad-e6-metal-flags", with_kernel("torch", component("cpp-metal", **{"metal-flags": []})))
    yield Case("bad-e6-cuda-rocm-archs", with_kernel("torch", component("cpp-cuda", **{"rocm-archs": []})))
    yield Case("bad-e6-cpp-dep-unknown", with_kernel("torch", component("cpp-cpu", depends=["tvm-ffi"])))
    yield Case("bad-e6-rust-with-torch", with_kernel("torch", rust))
    yield Case("bad-e6-rust-with-noarch", with_kernel("torch-noarch", rust))
    yield Case("bad-e6-rust-with-mlx", toml({"general": general6(backends=["metal"]), "mlx-noarch": {}, "kernel": {"k": rust}}))
    yield Case("bad-e6-rust-no-manifest", with_kernel("tvm-ffi", {"language": "rust-cpu", "src": []}))
    yield Case("bad-e6-rust-no-src", with_kernel("tvm-ffi", {"language": "rust-cpu", "cargo-manifest": "C.toml"}))
    yield Case("bad-e6-rust-depends", with_kernel("tvm-ffi", component("rust-cpu", depends=[])))
    yield Case("bad-e6-rust-include", with_kernel("tvm-ffi", component("rust-cpu", include=[])))
    yield Case("bad-e6-rust-cxx-flags", with_kernel("tvm-ffi", component("rust-cpu", **{"cxx-flags": []})))
    yield Case("bad-e6-rust-cpu-capabilities", with_kernel("tvm-ffi", component("rust-cpu", **{"cuda-capabilities": []})))
    yield Case("bad-e6-oxide-cuda-flags", with_kernel("tvm-ffi", component("rust-cuda-oxide", **{"cuda-flags": []})))
    yield Case("bad-e6-oxide-capabilities-string", with_kernel("tvm-ffi", component("rust-cuda-oxide", **{"cuda-capabilities": "8.0"})))
    yield Case("bad-e6-manifest-int", with_kernel("tvm-ffi", component("rust-cpu", **{"cargo-manifest": 1})))
    yield Case("bad-e6-manifest-list", with_kernel("tvm-ffi", component("rust-cpu", **{"cargo-manifest": ["C.toml"]})))
    yield Case("bad-e6-rust-src-string", with_kernel("tvm-ffi", component("rust-cpu", src="crate")))
    yield Case("bad-e6-cutile-no-minver", with_kernel("tvm-ffi", component("rust-cutile")))
    yield Case("bad-e6-cutile-old", with_kernel("tvm-ffi", component("rust-cutile", **{"tileiras-minver": "13.1"})))
    yield Case("bad-e6-cutile-12", with_kernel("tvm-ffi", component("rust-cutile", **{"tileiras-minver": "12.9"})))
    yield Case("bad-e6-cutile-three-components", with_kernel("tvm-ffi", component("rust-cutile", **{"tileiras-minver": "13.2.1"})))
    yield Case("bad-e6-cutile-one-component", with_kernel("tvm-ffi", component("rust-cutile", **{"tileiras-minver": "13"})))
    yield Case("bad-e6-cutile-float", "[general]\nname='ab'\nversion=0\nedition=6\nlicense='x'\nbackends=['cuda']\n[tvm-ffi]\n[kernel.t]\nlanguage='rust-cutile'\nsrc=[]\ncargo-manifest='C.toml'\ntileiras-minver=13.2\n")
    yield Case("bad-e6-cutile-capabilities", with_kernel("tvm-ffi", component("rust-cutile", **RUST_EXTRA["rust-cutile"], **{"cuda-capabilities": []})))
    yield Case("bad-e6-two-rust-problems", toml({"general": general6(), "torch": {}, "kernel": {"a": component("rust-cutile", **{"tileiras-minver": "12.0"}), "b": rust}}))
    yield Case("bad-e6-layout-unknown", toml({"general": general6(**{"build-layout": "tar"}), "torch": {}}))
    yield Case("bad-e6-layout-case", toml({"general": general6(**{"build-layout": "Zip"}), "torch": {}}))
    yield Case("bad-e6-layout-int", toml({"general": general6(**{"build-layout": 1}), "torch": {}}))
    yield Case("bad-e6-layout-table", toml({"general": general6(**{"build-layout": {"zip": {}}}), "torch": {}}))
    yield Case("bad-e6-layout-list", toml({"general": general6(**{"build-layout": ["zip"]}), "torch": {}}))
    yield Case("bad-e5-layout", toml({"general": general(5, **{"build-layout": "zip"}), "torch": {}}))
    yield Case("bad-v4-layout", toml({"general": general(None, **{"build-layout": "zip"}), "torch": {}}))
    yield Case("bad-e5-language", toml({"general": general(5, backends=["cpu"]), "torch": {}, "kernel": {"k": {**kernel("cpu"), "language": "cpp-cpu"}}}))
    yield Case("bad-e5-mlx", toml({"general": general(5, backends=["metal"]), "mlx-noarch": {}}))
    yield Case("bad-v4-mlx", toml({"general": general(None, backends=["metal"]), "mlx-noarch": {}}))
    yield Case("bad-e6-mlx-cpu", toml({"general": general6(backends=["cpu"]), "mlx-noarch": {}}))
    yield Case("bad-e6-mlx-metal-and-cuda", toml({"general": general6(backends=["metal", "cuda"]), "mlx-noarch": {}}))
    yield Case("bad-e6-mlx-unknown-key", toml({"general": general6(backends=["metal"]), "mlx-noarch": {"src": []}}))
    yield Case("bad-e6-mlx-and-torch", toml({"general": general6(backends=["metal"]), "mlx-noarch": {}, "torch": {}}))
    yield Case("bad-e6-no-framework", toml({"general": general6()}))
    yield Case("bad-e6-unknown-top", toml({"general": general6(), "torch": {}, "rust": {}}))
    yield Case("bad-e6-torch-unknown", toml({"general": general6(), "torch": {"language": "cpp-cpu"}}))
    yield Case("bad-e6-tvm-ffi-stable-abi", toml({"general": general6(), "tvm-ffi": {"stable-abi": "2.11"}}))
    yield Case("bad-e6-general-rocm", toml({"general": general6(rocm={}), "torch": {}}))
    yield Case("bad-e6-tpu-kernel-depends", toml({"general": general6(tpu={"kernel-depends": []}), "torch": {}}))
    yield Case("bad-e6-version-string", toml({"general": general6(version="1"), "torch": {}}))
    yield Case("bad-e6-cuda-minver", with_kernel("torch", component("cpp-cuda", **{"cuda-minver": "12.x"})))
    yield Case("diff-e6-manifest-absolute", with_kernel("tvm-ffi", component("rust-cpu", **{"cargo-manifest": "/abs/Cargo.toml"})), PATHS_INSIDE)
    yield Case("diff-e6-manifest-empty", with_kernel("tvm-ffi", component("rust-cpu", **{"cargo-manifest": ""})), PATHS_INSIDE)
    yield Case("diff-e6-rust-src-outside", with_kernel("tvm-ffi", component("rust-cpu", src=["../crate"])), PATHS_INSIDE)
    yield Case("diff-e5-src-absolute", toml({"general": general(5), "torch": {"src": ["/abs/b.cpp"]}}), PATHS_INSIDE)
    # before v3: no `backends` (they followed from the components), `universal` flags
    yield Case("pre-v3-universal", "[general]\nname = 'relu'\nuniversal = true\n[torch]\n", PRE_V3)
    yield Case("pre-v3-cuda-minver", "[general]\nname = 'relu'\ncuda-minver = '12.0'\n[torch]\n[kernel.k]\nbackend = 'cuda'\nsrc = []\ndepends = []\n", PRE_V3)
    yield Case("pre-v3-components", "[general]\nname = 'relu'\n[torch]\nsrc = []\n[kernel.k]\nbackend = 'cuda'\nsrc = []\ndepends = []\n", PRE_V3)
    yield Case("pre-v3-v1-language", "[general]\nname = 'relu'\n[torch]\nsrc = []\n[kernel.k]\nlanguage = 'cuda-hipify'\nsrc = []\ndepends = []\n", PRE_V3)
    yield Case("pre-v3-v1-universal", "[general]\nname = 'relu'\n[torch]\nuniversal = true\n", PRE_V3)


def mutant_cases6() -> Iterator[Case]:
    for base_name, base in (("full", FULL6), ("torch", TORCH6)):
        for path in _paths(base):
            name = f"e6-{base_name}-" + ".".join(path)
            dropped = copy.deepcopy(base)
            del _get(dropped, path[:-1])[path[-1]]
            yield Case(f"mutant-drop-{name}", toml(dropped))
            retyped = copy.deepcopy(base)
            parent = _get(retyped, path[:-1])
            parent[path[-1]] = _retyped(parent[path[-1]])
            yield Case(f"mutant-retype-{name}", toml(retyped))
            value = _get(base, path)
            if isinstance(value, dict):
                extra = copy.deepcopy(base)
                _get(extra, path)["frobnicate"] = 1
                yield Case(f"mutant-unknown-in-{name}", toml(extra))
            if isinstance(value, list) and value and not isinstance(value[0], dict):
                broken = copy.deepcopy(base)
                _get(broken, path)[0] = 7
                yield Case(f"mutant-item-{name}", toml(broken))
            if path[-1] == "language":
                for language in LANGUAGES:
                    other = copy.deepcopy(base)
                    _get(other, path[:-1])["language"] = language
                    yield Case(f"mutant-language-{name}-{language}", toml(other))
    for framework in ("torch", "torch-noarch", "mlx-noarch"):
        other = copy.deepcopy(FULL6)
        other[framework] = other.pop("tvm-ffi") if framework == "torch" else {}
        other.pop("tvm-ffi", None)
        yield Case(f"mutant-framework-e6-full-{framework}", toml(other))


def all_cases() -> list[Case]:
    return [*valid_cases(), *invalid_cases(), *mutant_cases(), *valid_cases6(), *invalid_cases6(), *mutant_cases6()]
