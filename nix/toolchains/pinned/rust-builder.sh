# Rust (rustc and cargo) from Debian bookworm's rustc-web/cargo-web packages (the Rust that
# bookworm-security keeps current for its browsers; bookworm's own rustc is 1.63), patched
# to run from the store: the programs get the store ld.so, and every program and library
# finds its libraries (LLVM, librustc_driver, cargo's libcurl/libgit2 and theirs) in this
# tree, then in the runtime derivation (glibc, libstdc++, OpenSSL, ...). The sysroot
# (usr/lib/rustlib: the standard library's rlibs) is found from rustc's own location.
# cargo and rustc link build scripts and proc macros with `cc` from PATH: the pinned cc.
source "$libSh"
unpack_debs "$out" $debs
relative_symlinks "$out"
rm -rf "$out/usr/share/doc" "$out/usr/share/man" "$out/usr/share/lintian" "$out/usr/share/zsh" "$out/usr/share/bash-completion"
libdir="$out/usr/lib/x86_64-linux-gnu"
for dir in "$out/usr/bin" "$out/usr/libexec" "$libdir"; do
  find "$dir" -maxdepth 2 -type f | while IFS= read -r file; do
    is_elf "$file" || continue
    chmod u+w "$file"
    if patchelf --print-interpreter "$file" >/dev/null 2>&1; then
      patchelf --set-interpreter "$ld" "$file"
    fi
    if [ -n "$(patchelf --print-needed "$file" 2>/dev/null)" ]; then
      patchelf --add-rpath "$libdir:$runtime/lib" "$file"
    fi
  done
done
mkdir -p "$out/bin"
for tool in rustc cargo rustdoc; do ln -s "../usr/bin/$tool" "$out/bin/$tool"; done
# Self-test: rustc compiles a static library (no linker involved) and cargo starts.
printf '#[no_mangle]\npub extern "C" fn kb_probe(x: i32) -> i32 { x + 1 }\n' > probe.rs
"$out/bin/rustc" --edition 2021 --crate-type staticlib -C opt-level=1 -o libprobe.a probe.rs
HOME="$PWD" CARGO_HOME="$PWD/cargo-home" "$out/bin/cargo" --version
echo "rust: $("$out/bin/rustc" --version), sysroot $("$out/bin/rustc" --print sysroot)"
