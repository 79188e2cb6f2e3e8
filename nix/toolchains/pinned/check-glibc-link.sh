#!@bash@
# check-glibc-link OUTPUT LINK-ARGS... : after a shared link against the glibc @glibc@ stubs.
# A reference the stubs could not bind stays unversioned; when a later glibc exports that
# name (missing.txt), the module would need a newer glibc than manylinux_2_28 allows (or
# fail to load on glibc @glibc@): a link error naming the symbol and the objects using it.
output=$1
shift
missing=$(@cc@/bin/readelf --dyn-syms -W "$output" | @runtime@/bin/awk '
  NR == FNR { added[$1] = $2; next }
  $5 == "GLOBAL" && $7 == "UND" && ($8 in added) { print $8, added[$8] }
' @out@/share/glibc-@glibc@/missing.txt -)
[ -z "$missing" ] && exit 0
@runtime@/bin/rm -f "$output"
while read -r symbol version; do
  users=""
  for arg in "$@"; do
    case $arg in
      *.o|*.a)
        if [ -f "$arg" ] && @cc@/bin/nm -u "$arg" 2>/dev/null | @runtime@/bin/grep -qE "^ +U $symbol\$"; then
          users="$users ${arg##*/}"
        fi ;;
    esac
  done
  echo "$output: error: undefined reference to '$symbol': glibc @glibc@ does not export it (added in $version), so a manylinux_2_28 module cannot use it${users:+; used by$users}" >&2
done <<< "$missing"
exit 1
