# Python from Debian's packages, patched to run from the store.
source "$libSh"
unpack_debs "$out" $debs
relative_symlinks "$out"
# Debian's pyconfig.h includes <x86_64-linux-gnu/python3.11/pyconfig.h>, which only the
# system include path finds: put the real one where Python's include directory says.
inc="$out/usr/include"
rm "$inc/python3.11/pyconfig.h"
cp "$inc/x86_64-linux-gnu/python3.11/pyconfig.h" "$inc/python3.11/pyconfig.h"
rm -rf "$out/usr/share/doc" "$out/usr/share/man"
patch_elf_tree "$out/usr/bin"
patch_elf_tree "$out/usr/lib/python3.11/lib-dynload"
# Bytecode for the standard library. Debian compiles it when the package is installed
# (py3compile, in its postinst), which unpacking skips; the store is read-only, so without
# it every interpreter the toolchain starts (each plan, object, link and variant step, each
# import check) compiled the modules it imports again: ~0.4 s a start. unchecked-hash .pyc
# files are used as they are, whatever the store's timestamps (as env-builder.sh's). No
# other bytecode is written: compileall would take the timestamp .pyc its own imports
# leave behind (enum, re, argparse, ...) as up to date, and the store's mtimes make those stale.
export PYTHONDONTWRITEBYTECODE=1
"$out/usr/bin/python3.11" -m compileall -q -j 0 --invalidation-mode unchecked-hash "$out/usr/lib/python3.11" >/dev/null || true
"$out/usr/bin/python3.11" -c 'import sys, ssl, ctypes, sqlite3; print("python:", sys.version.split()[0], sys.prefix)'
