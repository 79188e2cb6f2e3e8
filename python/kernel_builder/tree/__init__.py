"""What a built tree is: its layout, metadata.json, digests and the checks a tree must pass.

Used inside a variant derivation (the driver writes and checks a variant) and in front of
it (``check``, ``hash``, ``upload``), so it imports nothing from ``driver``, ``flake``,
``toolchain``, ``hub`` or ``cli``.
"""
