"""driver.unitdeps' pure parts: the compiler's dependency files, and the canonical command
of a unit (what its object derivation is keyed by)."""

from __future__ import annotations

from kernel_builder.driver.unitdeps import CANONICAL_OPS, UNIT_DIR, canonical_command, parse_depfile, store_root

ENV = "/nix/store/" + "e" * 32 + "-kb-env-torch2.13"
CC = "/nix/store/" + "c" * 32 + "-kb-cc-gcc12"
HOME = "/nix/store/" + "h" * 32 + "-kb-cuda13.0"
COMPILER = "/nix/store/" + "k" * 32 + "-kb-cuda13.0-compiler"
SCRATCH = "/build/kernel-builder/v-0123"
OPS = "_relu_cpu_abc1234"


def test_a_depfile_lists_its_prerequisites_without_targets() -> None:
    text = (f"x.o: {SCRATCH}/src/a.cpp {SCRATCH}/src/a.h \\\n {CC}/include/c++/12/cmath \\\n"
            " dir/with\\ space.h\nphony.h:\n")
    assert parse_depfile(text) == [f"{SCRATCH}/src/a.cpp", f"{SCRATCH}/src/a.h", f"{CC}/include/c++/12/cmath",
                                   "dir/with space.h"]


def test_store_root_is_the_store_path_of_a_file() -> None:
    assert store_root(f"{ENV}/lib/python3.11/site-packages/torch/include/a.h") == ENV
    assert store_root("/usr/include/stdio.h") is None


def _argv() -> list[str]:
    return [f"{CC}/bin/g++", f"-DTORCH_EXTENSION_NAME={OPS}", f"-D{OPS}_EXPORTS", f"-I{SCRATCH}/include",
            "-isystem", f"{ENV}/lib/python3.11/site-packages/torch/include", f"-ffile-prefix-map={ENV}=/kernel-builder/env",
            f"-ffile-prefix-map={CC}=/kernel-builder/cc", f"-ffile-prefix-map={SCRATCH}=/kernel-build",
            "-O3", "-MD", "-MT", "x.o", "-MF", "x.o.d", "-o", f"CMakeFiles/{OPS}.dir/a.cpp.o", "-c", f"{SCRATCH}/src/a.cpp"]


def test_a_torch_free_unit_names_no_torch_and_no_ops_identifier() -> None:
    reads = [f"{SCRATCH}/src/a.cpp", f"{CC}/include/c++/12/cmath"]
    got = canonical_command(_argv(), scratch=SCRATCH, unit_dir=UNIT_DIR, reads=reads, ops_id=OPS, ops_value=CANONICAL_OPS)
    assert got == [f"{CC}/bin/g++", f"-DTORCH_EXTENSION_NAME={CANONICAL_OPS}", f"-D{CANONICAL_OPS}_EXPORTS",
                   f"-I{UNIT_DIR}/include", f"-ffile-prefix-map={CC}=/kernel-builder/cc",
                   f"-ffile-prefix-map={UNIT_DIR}=/kernel-build", "-O3", f"{UNIT_DIR}/src/a.cpp",
                   "-o", f"{UNIT_DIR}/object.o", "-c"]


def test_a_unit_that_reads_torch_keeps_its_directory_and_prefix_map() -> None:
    reads = [f"{SCRATCH}/src/a.cpp", f"{ENV}/lib/python3.11/site-packages/torch/include/torch/library.h"]
    got = canonical_command(_argv(), scratch=SCRATCH, unit_dir=UNIT_DIR, reads=reads, ops_id=OPS, ops_value=OPS)
    assert ["-isystem", f"{ENV}/lib/python3.11/site-packages/torch/include"] == got[4:6]
    assert f"-ffile-prefix-map={ENV}=/kernel-builder/env" in got
    assert f"-DTORCH_EXTENSION_NAME={OPS}" in got  # the binding: measured to depend on it


def test_a_cuda_home_becomes_the_compiler_where_the_unit_reads_through_it() -> None:
    argv = [f"{HOME}/bin/nvcc", f"-ccbin={CC}/bin/g++", "-isystem", f"{ENV}/nvidia/cu13/include", "-isystem",
            f"{HOME}/include", f"-Xcompiler=-ffile-prefix-map={HOME}=/kernel-builder/cuda",
            f"-Xcompiler=-ffile-prefix-map={ENV}=/kernel-builder/env", "-x", "cu", "-c", f"{SCRATCH}/src/k.cu"]
    reads = [f"{SCRATCH}/src/k.cu", f"{ENV}/nvidia/cu13/include/cuda_runtime.h"]
    got = canonical_command(argv, scratch=SCRATCH, unit_dir=UNIT_DIR, reads=reads, ops_id=OPS, ops_value=CANONICAL_OPS,
                            aliases=[(HOME, COMPILER), (f"{ENV}/nvidia/cu13", COMPILER)])
    assert ENV not in " ".join(got) and HOME not in " ".join(got)
    assert got[:2] == [f"{COMPILER}/bin/nvcc", f"-ccbin={CC}/bin/g++"]
    assert f"-Xcompiler=-ffile-prefix-map={COMPILER}=/kernel-builder/cuda" in got
