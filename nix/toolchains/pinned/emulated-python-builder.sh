# The import check's Python for a cross environment: the target's CPython 3.11 (Debian's
# $machine packages) run by qemu-user on this machine, with the target's torch and what it
# loads (the environment's wheels and its emulated check wheels, pip-installed for the
# target's platform tags into the target CPython's own dist-packages). $out/bin/python is
# an x86_64 script, so the build runs it like any toolchain Python. See docs/nix.md,
# "Checks under emulation".
source "$libSh"
unpack_debs debs $debs
mkdir -p "$out/bin" "$out/stand-ins"
# qemu-user, static: the one emulator this target needs (the package has every target's).
cp "debs/usr/bin/qemu-$machine-static" "$out/bin/"
rm -rf debs/usr/bin/qemu-* debs/usr/share/doc debs/usr/share/man debs/usr/share/lintian debs/etc/binfmt.d
mv debs "$out/sysroot"
relative_symlinks "$out/sysroot"
root="$out/sysroot"
# The machine as the target's programs read it. qemu-user passes this machine's /proc and
# /sys through (an x86_64 /proc/cpuinfo), unless the sysroot (qemu -L) has the file: torch's
# cpuinfo library crashes on an x86_64 description, so the sysroot describes one Neoverse-N1
# core, the CPU qemu emulates (-cpu neoverse-n1, below).
mkdir -p "$root/proc" "$root/sys/devices/system/cpu/cpu0/regs/identification"
cat > "$root/proc/cpuinfo" <<'CPUINFO'
processor	: 0
BogoMIPS	: 50.00
Features	: fp asimd evtstrm aes pmull sha1 sha2 crc32 atomics fphp asimdhp cpuid asimdrdm lrcpc dcpop asimddp ssbs
CPU implementer	: 0x41
CPU architecture: 8
CPU variant	: 0x3
CPU part	: 0xd0c
CPU revision	: 1

CPUINFO
for file in possible present online kernel_max; do echo 0 > "$root/sys/devices/system/cpu/$file"; done
echo 0x00000000413fd0c1 > "$root/sys/devices/system/cpu/cpu0/regs/identification/midr_el1"

mkdir -p wheels
for wheel in $wheels; do ln -sfn "$wheel" "wheels/${wheel#*-}"; done  # a wheel in both groups once
sp="$root/usr/lib/python3/dist-packages"  # on the target CPython's own path (Debian's site.py)
install_wheels_for_machine "$sp" $pipPlatforms wheels/*.whl  # the locked wheels' own tags (parts.nix)
rm -rf "$sp/bin"
# Bytecode, compiled here: an emulated Python compiling torch's modules on every import (the
# store is read-only, nothing is cached) takes a third longer to import it. A .pyc is the
# same on every machine of one CPython version; unchecked-hash ones are used as they are,
# whatever the store's timestamps. A file that does not compile (a template, a test of
# another Python) is compiled, or fails, when imported, as it would without this.
PYTHONDONTWRITEBYTECODE=1 "$python/usr/bin/python3.11" -m compileall -q -j 0 --invalidation-mode unchecked-hash "$root/usr/lib/python3.11" "$sp" >/dev/null || true

# A library of soname $1, written to $2, defining the symbols listed on stdin as
# "FUNC|OBJECT SIZE NAME", each versioned $1: functions answer an error code, objects are
# zeroed bytes of their size. Nothing a check runs calls them (see the two uses below).
stand_in_library() {
  awk '$1 == "FUNC" { print "int " $3 "(void) { return 999; }" } $1 == "OBJECT" { print "char " $3 "[" ($2 > 0 ? $2 : 1) "];" }' > stand-in.c
  printf '%s { global: *; };\n' "$1" > stand-in.map
  "$cc/bin/gcc" -shared -fPIC -O1 -Wl,-soname,"$1" -Wl,--version-script,stand-in.map stand-in.c -o "$2"
}

# Load-only libraries (the lock's emulation.loadOnly): GPU libraries torch links that the
# import loads but nothing under emulation can call (there is no GPU). Loading them for real
# is most of an emulated `import torch`'s dynamic linking: cuBLASLt, cuFFT, nvJitLink and
# NVRTC cost 4-6 s of emulated relocations and constructors per import check. Each is
# replaced by a library of its soname defining exactly the symbols it exports, with their
# version, so every symbol a module or torch asks of it resolves (or fails) as before.
for soname in $loadOnly; do
  real=$(find "$sp" -name "$soname" -type f)
  [ "$(echo "$real" | grep -c .)" = 1 ] || { echo "load-only $soname: expected one file in the environment, found: ${real:-none}" >&2; exit 1; }
  # readelf columns: Num Value Size Type Bind Vis Ndx Name; ABS is the version's own symbol
  "$cc/bin/readelf" --dyn-syms -W "$real" | awk '$7 != "UND" && $7 != "ABS" && ($4 == "FUNC" || $4 == "OBJECT") && ($5 == "GLOBAL" || $5 == "WEAK") { print $4, $3, $8 }' > exports
  [ -s exports ] || { echo "load-only $soname: exports nothing" >&2; exit 1; }
  if grep -v "@@$soname\$" exports; then
    echo "load-only $soname: the exports above are not all versioned $soname; this stand-in cannot reproduce them" >&2; exit 1
  fi
  rm -f "$real"
  awk '{ sub(/@@.*/, "", $3); print }' exports | stand_in_library "$soname" "$real"
  echo "load-only $soname: $(wc -l < exports) exports"
done

# Stand-ins for libraries torch links that no index serves for this machine (the lock's
# emulation.standIns): a library of that soname defining each symbol torch's libraries
# import from it (with its symbol version), every function answering an error. Only
# NVIDIA's profiler interface (libcupti) is one: nothing a check runs calls it.
for soname in $standIns; do
  symbols=$("$cc/bin/readelf" --dyn-syms -W "$sp"/torch/lib/*.so* | awk -v soname="$soname" \
    '$7 == "UND" && (at = index($8, "@")) && substr($8, at + 1) == soname { print substr($8, 1, at - 1) }' | sort -u)
  [ -n "$symbols" ] || { echo "stand-in $soname: torch imports nothing from it" >&2; exit 1; }
  for symbol in $symbols; do echo "FUNC 0 $symbol"; done | stand_in_library "$soname" "$out/stand-ins/$soname"
  echo "stand-in $soname: $(echo $symbols | wc -w) symbols"
done

cat > "$out/bin/python" <<WRAPPER
#!$runtime/bin/bash
# The $triple CPython 3.11 under qemu-user (kernel-builder's emulated-python-builder.sh).
export LD_LIBRARY_PATH="$out/stand-ins"
exec "$out/bin/qemu-$machine-static" -cpu neoverse-n1 -L "$root" "$root/usr/bin/python3.11" "\$@"
WRAPPER
chmod +x "$out/bin/python"
ln -s python "$out/bin/python3"
ln -s python "$out/bin/python3.11"
# Self-test: the target's torch imports and computes, and the kernels loader imports.
"$out/bin/python" -c 'import platform, torch, kernels; x = torch.arange(-2.0, 3.0); assert torch.relu(x).tolist() == [0, 0, 0, 1, 2]; print("emulated python:", platform.machine(), "torch", torch.__version__)'
