"""A per-object build's plan, objects and link belong to their variant's row (nix/builds.py
``part_owner``): their failures fail it, their log lines are its log."""

from __future__ import annotations

from kernel_builder.nix import part_owner, target_of

KEYS = ["torch213-cxx11-cpu-x86_64-linux", "torch213-cxx11-cu130-x86_64-linux"]
CPU = KEYS[0]


def test_parts_name_their_variant() -> None:
    parts = (f"relu-{CPU}-plan", f"relu-{CPU}-link", f"0-obj-relu-{CPU}-relu_cpu-relu_cpu.cpp",
             f"0-obj-relu-{CPU}-torch-ext-torch_binding.cpp")
    for part in parts:
        drv = f"/nix/store/{'a' * 32}-{part}.drv"
        assert part_owner(drv, KEYS) == CPU
        assert target_of(drv, KEYS) is None  # a part is never the variant's own derivation


def test_the_variant_and_other_derivations_are_no_part() -> None:
    assert part_owner(f"/nix/store/{'a' * 32}-relu-{CPU}.drv", KEYS) is None
    assert part_owner(f"/nix/store/{'a' * 32}-relu-{CPU}-check.drv", KEYS) is None
    assert part_owner(f"/nix/store/{'a' * 32}-kb-env-torch2.13.drv", KEYS) is None
    assert part_owner(None, KEYS) is None
