"""The one host platform probe: a pure mapping, and every caller agreeing with it."""

from __future__ import annotations

import platform

import pytest

from kernel_builder.variants import buildsets
from kernel_builder.variants import host as hostmod
from kernel_builder.variants import system as sysmod
from kernel_builder.variants.buildsets import current_system
from kernel_builder.variants.host import Platform, host_platform, platform_names


@pytest.mark.parametrize(
    ("machine", "system", "expected"),
    [
        ("x86_64", "Linux", Platform("x86_64", "linux")),
        ("aarch64", "Linux", Platform("aarch64", "linux")),
        ("arm64", "Darwin", Platform("aarch64", "darwin")),
        ("x86_64", "Darwin", Platform("x86_64", "darwin")),
        ("AMD64", "Windows", Platform("x86_64", "windows")),
        ("x64", "Windows", Platform("x86_64", "windows")),
        ("ARM64", "Windows", Platform("aarch64", "windows")),
        ("riscv64", "Linux", Platform("riscv64", "linux")),
    ],
)
def test_platform_names(machine: str, system: str, expected: Platform) -> None:
    assert platform_names(machine, system) == expected


def test_system_string() -> None:
    assert Platform("aarch64", "darwin").system == "aarch64-darwin"


def test_probe_is_this_machine_and_cached() -> None:
    assert host_platform() == platform_names(platform.machine(), platform.system())
    assert host_platform() is host_platform()


def test_every_caller_uses_the_one_probe(monkeypatch: pytest.MonkeyPatch) -> None:
    fake = Platform("aarch64", "darwin")
    for module in (sysmod, hostmod):  # buildsets imports it from host when asked
        monkeypatch.setattr(module, "host_platform", lambda: fake)
    sysmod._probe_platform.cache_clear()
    try:
        cpu, os_name, _mac = sysmod._probe_platform()
        assert (cpu, os_name) == ("aarch64", "darwin")
        assert buildsets.current_system() == "aarch64-darwin"
    finally:
        sysmod._probe_platform.cache_clear()


def test_current_system_is_the_host() -> None:
    assert current_system() == host_platform().system
