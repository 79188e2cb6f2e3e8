"""Exactly what runs inside a variant derivation: plan (generated CMake, ``registration.h``,
``_ops.py``), compile, assemble the variant directory, check it, write metadata and digest.

``python -m kernel_builder.driver.run_variant`` is the entry point; ``variant.build_variant``
builds one variant. The derivation ships this package with ``tree/``, ``variants/``,
``config/`` and the core modules, so it imports nothing from ``flake``, ``toolchain``,
``hub`` or ``cli`` (``tests/test_boundaries.py``).
"""
