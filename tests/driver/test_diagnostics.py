"""driver.diagnostics: the first error of a whole build log, whatever compiler said it and
however many warnings came after it. The logs are shaped as GCC 12, nvcc 13 and GNU ld
print them (ninja's progress lines between commands)."""

from __future__ import annotations

from kernel_builder.driver.diagnostics import summarize
from kernel_builder.tree.checks import missing_module

NVCC_WARNING = [
    "/build/src/csrc/sgmv.cu(41): warning #179-D: right operand of \"%\" is zero",
    "      int x = 1 % 0;",
    "                  ^",
    "",
    "Remark: The warnings can be suppressed with \"-diag-suppress <warning-number>\"",
    "",
]

GCC_FATAL = [
    "FAILED: CMakeFiles/_punica.dir/csrc/bgmv.cpp.o",
    "/usr/bin/g++ -DTORCH_EXTENSION_NAME=_punica -c /build/src/csrc/bgmv.cpp",
    "In file included from /build/src/csrc/bgmv_impl.h:3,",
    "                 from /build/src/csrc/bgmv.cpp:1:",
    "/build/src/csrc/gemm.h:7:10: fatal error: cutlass/cutlass.h: No such file or directory",
    "    7 | #include <cutlass/cutlass.h>",
    "      |          ^~~~~~~~~~~~~~~~~~~",
    "compilation terminated.",
]


def test_the_first_error_is_found_before_a_flood_of_warnings() -> None:
    log = ["[1/3] Building CUDA object sgmv.cu.o", *NVCC_WARNING * 3, *GCC_FATAL, "[2/3] Building CUDA object x.cu.o", *NVCC_WARNING * 200]
    summary = summarize(log)
    first = summary.first_error
    assert first is not None
    assert (first.severity, first.location) == ("fatal error", "/build/src/csrc/gemm.h:7:10")
    assert first.message == "cutlass/cutlass.h: No such file or directory"
    assert first.context == tuple(GCC_FATAL[2:])  # include chain, the error, excerpt, caret, the end
    assert (summary.errors, summary.warnings) == (1, 203)


def test_nvcc_front_end_errors_and_the_later_ones_are_counted() -> None:
    log = [
        *NVCC_WARNING,
        "/build/src/csrc/sgmv.cu(88): error: identifier \"half_t\" is undefined",
        "      half_t y = 0;",
        "      ^",
        "",
        "/build/src/csrc/sgmv.cu(90): error: expected a \";\"",
        "2 errors detected in the compilation of \"/build/src/csrc/sgmv.cu\".",
    ]
    summary = summarize(log)
    assert summary.first_error is not None
    assert summary.first_error.location == "/build/src/csrc/sgmv.cu:88"
    assert summary.first_error.context == tuple(log[6:9])
    assert (summary.errors, summary.warnings) == (2, 1)


def test_linker_and_nvcc_driver_errors_have_no_location() -> None:
    ld = summarize(["[3/3] Linking CXX shared module _relu.so", "/usr/bin/ld: relu.cpp.o: in function `relu':",
                    "relu.cpp:(.text+0x1d): undefined reference to `missing_symbol()'", "collect2: error: ld returned 1 exit status"])
    assert ld.first_error is not None and "undefined reference to `missing_symbol()'" in ld.first_error.message
    nvcc = summarize(["nvcc fatal   : Unsupported gpu architecture 'compute_12'"])
    assert nvcc.first_error is not None and nvcc.first_error.severity == "fatal error"
    assert nvcc.first_error.message == "Unsupported gpu architecture 'compute_12'"


def test_a_log_of_warnings_only_has_no_first_error() -> None:
    summary = summarize(["/build/src/a.cpp:3:2: warning: #warning noisy [-Wcpp]", "    3 | #warning noisy", "      |  ^~~~~~~"] * 5)
    assert summary.first_error is None and (summary.errors, summary.warnings) == (0, 5)


def test_python_tracebacks_and_driver_lines_are_not_compiler_errors() -> None:
    log = ['  File "/nix/store/x/relu/__init__.py", line 3, in <module>', "kernel-builder: building torch-cpu",
           "error: variant torch-cpu failed 1 check(s):", "ModuleNotFoundError: No module named 'einops.layers'"]
    assert summarize(log).first_error is None
    assert missing_module(log) == "einops"
    assert missing_module(log[:3]) is None
