"""The front end of a build: the kernel flake, the nix driver, variant selection, binary
caches and ``build --local``. Nothing here runs inside a variant derivation, so editing it
rebuilds no variant."""
