"""Toolchains for variant builds: ``pinned`` (the default: a lock of Debian packages and
wheels, fetched into the Nix store, built into hermetic store paths) and ``host`` (Python
environments with torch found on this machine: ``--toolchain host`` and ``build --local``).
``state`` is the directory both keep their records in."""
