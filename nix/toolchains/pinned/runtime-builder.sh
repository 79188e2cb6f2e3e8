# The first derivation: runs under the seed busybox alone (no bash, no patchelf yet).
# Unpacks the runtime libraries and the tool .debs, flattens the libraries into $out/lib,
# and patches bash and patchelf (run through the store's ld.so) to use them, so every
# later derivation has a bash builder and a patchelf whose runtime deps are store paths.
bb=$seed/busybox
$bb mkdir -p "$out/lib" "$out/bin" root
for deb in $debs; do $bb dpkg-deb -x "$deb" root; done
for dir in root/lib/x86_64-linux-gnu root/usr/lib/x86_64-linux-gnu root/lib64; do
  [ -d "$dir" ] || continue
  for lib in "$dir"/*.so*; do
    [ -e "$lib" ] || continue
    $bb cp -L "$lib" "$out/lib/" 2>/dev/null || true
  done
done
$bb chmod -R u+w "$out/lib"
ld="$out/lib/ld-linux-x86-64.so.2"
# patchelf runs with the unpacked copies of its libraries: it must not map a file it rewrites.
pe="root/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2 --library-path root/lib/x86_64-linux-gnu:root/usr/lib/x86_64-linux-gnu root/usr/bin/patchelf"
for lib in "$out"/lib/*.so*; do
  case ${lib##*/} in ld-linux*|libc.so*) ;; *) $pe --set-rpath '$ORIGIN' "$lib" 2>/dev/null || true ;; esac
done
for tool in bash patchelf; do
  path=root/usr/bin/$tool
  [ -e "$path" ] || path=root/bin/$tool
  $bb cp "$path" "$out/bin/$tool"
  $bb chmod u+w "$out/bin/$tool"
  $pe --set-interpreter "$ld" --force-rpath --set-rpath "$out/lib" "$out/bin/$tool"
done
# Every busybox applet but the ones bash and patchelf provide, as links to the seed.
for applet in $($bb --list); do
  case $applet in bash|sh|patchelf|busybox|'['|'[['|linuxrc|init) continue ;; esac
  $bb ln -s "$bb" "$out/bin/$applet"
done
$bb ln -s bash "$out/bin/sh"
PATH="$out/bin" "$out/bin/bash" -c 'echo "runtime: bash $BASH_VERSION, $(ls "$0"/lib | wc -l) libraries"' "$out"
