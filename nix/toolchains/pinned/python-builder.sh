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
"$out/usr/bin/python3.11" -c 'import sys, ssl, ctypes, sqlite3; print("python:", sys.version.split()[0], sys.prefix)'
