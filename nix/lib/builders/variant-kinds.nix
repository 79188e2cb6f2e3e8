# The derivation of one variant (variant-set.nix), by kind:
#   split       arch variants with the pinned toolchain, built per translation unit
#               (per-object.nix: plan -> deps -> objects -> link -> variant)
#   monolithic  one derivation (variant.nix): noarch variants, the host toolchain, Rust
#               components, another native system's outputs, and every variant in
#               `legacyPackages.<sys>.monolithic`
#   devShell    the monolithic derivation with a shell hook (`nix develop` runs the
#               one-variant build by hand)
# Every kind gets the same build options: the import check switch (doGetKernelCheck), the
# build layout (--layout), the variant's C++/Python dependencies and kernel-depends.
#
# Type: { pure; path; config; system; kernel; context; depsOf; nativeOnly; doGetKernelCheck }
#       -> { split; monolithic; devShell : variant -> derivation;
#            withAttrs : bool -> attrs -> variant -> derivation; sources; kernelDeps }
{ pure, path, config, system, kernel, context, depsOf, nativeOnly, doGetKernelCheck }:
let
  sources = builtins.listToAttrs (map
    (backend: { name = backend; value = import ./source.nix { inherit pure path config backend; }; })
    config.backends);

  # `kernel-builder build --layout`: the variants' build layout, over build.toml's (an
  # attribute only when given, so the default derivations stay as they are).
  layoutAttrs = if (context.buildOptions.buildLayout or null) == null then { }
    else { KERNEL_BUILDER_BUILD_LAYOUT = context.buildOptions.buildLayout; };
  # doGetKernelCheck = false: the one-variant build skips its import check (an attribute
  # only then, so the default derivations stay as they are).
  importCheckAttrs = if doGetKernelCheck then { } else { noImportCheck = "1"; };
  # Arch variants with the pinned toolchain build per translation unit (per-object.nix:
  # plan -> objects -> link -> variant); noarch ones, the host toolchain and the dev shells
  # (`nix develop` runs the one-variant build by hand) stay one derivation.
  isPinned = toolchain: (toolchain.identity.toolchainProvider or "host") == "pinned";
  # A variant with Rust components stays one derivation too: cargo builds its crates first.
  # So does every variant of another native system's outputs (nativeOnly: aarch64-linux's
  # on x86_64): per-object evaluation builds the plan and deps steps (import from
  # derivation), which only that machine can run, and every machine evaluates them
  # (`nix flake check`, kernels-community's matrix).
  perObject = v: !nativeOnly && v.kind != "noarch" && v.toolchain.available && isPinned v.toolchain && !depsOf.${v.backend}.hasRust;
  # The pinned toolchain's steps import the driver's package bytecode-compiled; the host
  # toolchain's Python may be another version, so it gets the sources.
  compiledPython = import ./compiled-python.nix { inherit system; inherit (context) pythonSrc; };
  # The locked kernel-depends trees the import check resolves get_kernel_dep from.
  kernelDeps = import ./kernel-deps.nix { inherit system; deps = context.kernelDeps or [ ]; };
  withAttrs = split: extraAttrs: v: import (if split && perObject v then ./per-object.nix else ./variant.nix) ({
    inherit config system kernel;
    extraAttrs = importCheckAttrs // layoutAttrs // v.depAttrs // kernelDeps.attrs v // extraAttrs;
    inherit (v) backend toolchain;
    variant = v.name;
    src = sources.${v.backend};
    pythonSrc = if isPinned v.toolchain then compiledPython v.toolchain else context.pythonSrc;
  } // (if split && perObject v then { inherit pure path; } else { }));
in
{
  inherit sources kernelDeps withAttrs;
  split = withAttrs true { };
  monolithic = withAttrs false { };
  devShell = withAttrs false {
    shellHook = ''
      echo "kernel-builder dev shell: ${config.name} ${"$"}{variant} (${"$"}{toolchainProvider} toolchain)" >&2
      echo "  toolchain python: $toolchainPython" >&2
      export PYTHONPATH="$kernelBuilderPython${"$"}{PYTHONPATH:+:$PYTHONPATH}"
    '';
    isDevShell = "1";
  };
}
