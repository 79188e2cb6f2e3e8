"""The per-variant build: generated CMake, compile, layout, metadata + digest, checks.

``build_variant`` builds one variant of a kernel into ``OUT/<variant>/``; ``build_local``
builds the variants a local toolchain can make; ``check_variant`` / ``check_tree`` check
built trees. Heavy work (compilers, torch) happens in subprocesses.
"""

from __future__ import annotations

__all__ = ["build_variant", "build_local", "check_variant", "check_tree", "VariantResult"]


def __getattr__(name: str):
    # Imported lazily so `import kernel_builder.variant_build` stays cheap for the CLI.
    if name in ("build_variant", "VariantResult"):
        # lazy: attributes load on first use, so run_variant's import closure stays small
        from kernel_builder.variant_build import variant

        return getattr(variant, name)
    if name == "build_local":
        from kernel_builder.variant_build.local import build_local  # lazy: as above

        return build_local
    if name in ("check_variant", "check_tree"):
        from kernel_builder.variant_build import checks  # lazy: as above

        return getattr(checks, name)
    raise AttributeError(name)
