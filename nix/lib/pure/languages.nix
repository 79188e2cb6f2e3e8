# Edition 6's `[kernel.NAME] language` and the backend it implies: the Nix half of
# python/kernel_builder/config/model.py (`Language.backend`); tests/nix/test_nix_edition6.py
# compares the two tables. Every Nix reader of a component's backend asks `backendOf`, so an
# edition-6 component (`language`) and its edition-5 twin (`backend`) build alike.
rec {
  /* The backend of each language: the backend table's (backends.nix, from
     python/kernel_builder/data/backends.json).

     Type: backends :: { <language> = string; }
  */
  backends = (import ./backends.nix).languages;

  /* Why a language's components are not built here (its compiler is not in any registry the
     toolchain lock pins); the languages missing here build. Python's table is
     python/kernel_builder/driver/rust.py `UNAVAILABLE`; a test compares the two.

     Type: unavailable :: { <language> = string; }
  */
  unavailable = {
    "rust-cuda-oxide" = "it needs cuda-oxide's rustc codegen backend (rustc-codegen-cuda, published only on GitHub in drbh/cuda-oxide and built with the nightly Rust its rust-toolchain.toml names), which no registry the toolchain lock pins (Debian, PyPI) serves";
    "rust-cutile" = "it needs NVIDIA's cuTile Rust crates (published on crates.io, which the pinned build cannot reach) and the tileiras compiler of CUDA >= 13.2, which the toolchain lock does not pin";
  };

  /* The backend of a parsed `[kernel.NAME]` table: its `backend` (editions 3-5), else the
     backend of its `language` (edition 6); null when it has neither (the Python reader
     refuses such a file before Nix sees it).

     Type: backendOf :: attrset -> string | null

     Example:
       backendOf { language = "cpp-cuda"; src = [ "k.cu" ]; }
       => "cuda"
  */
  backendOf =
    # a [kernel.NAME] table
    component:
    if component ? backend then component.backend
    else if component ? language then
      backends.${component.language}
        or (throw "kernel-builder: build.toml: unknown kernel language `${toString component.language}`; expected one of ${builtins.concatStringsSep ", " (builtins.attrNames backends)}")
    else null;
}
