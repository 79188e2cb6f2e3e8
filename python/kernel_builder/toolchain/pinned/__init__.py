"""Pinned toolchains: the lock (``nix/toolchain-lock.json``), resolving it (``toolchain
lock``), fetching its artifacts into the store (``toolchain fetch``) and the store Pythons
``check`` uses."""
