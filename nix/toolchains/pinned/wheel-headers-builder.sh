# The header directories of one pinned wheel (a C++ dependency such as CUTLASS), unpacked
# at the same relative paths as inside the wheel: $out/<include dir>/...
source "$libSh"
mkdir -p "$out"
for wheel in $wheels; do
  for dir in $includes; do
    unzip -q -o "$wheel" "$dir/*" -d "$out"
    [ -d "$out/$dir" ] || { echo "wheel-headers: $wheel has no $dir" >&2; exit 1; }
  done
done
chmod -R a-w "$out"
