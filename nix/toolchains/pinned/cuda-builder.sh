# A CUDA home in the layout nvcc and CMake expect, made from the CUDA wheels of a Python
# environment (nvidia/cu13): nvcc's bin/ copied (nvcc finds nvcc.profile and ../lib64
# relative to itself), include/ and nvvm/ linked, lib64/ with the unversioned library
# names (libcudart.so ...) that link lines and FindCUDAToolkit ask for.
# For a cross target, $hostCuda (this machine's wheels) gives the programs (bin/, nvvm/)
# and $wheelCuda (the target's) the headers and libraries, which nvcc's profile finds
# relative to itself: x86_64 nvcc, aarch64 (sbsa) libcudart.
source "$libSh"
programs=${hostCuda:-$wheelCuda}
mkdir -p "$out"
cp -r "$programs/bin" "$out/bin"
if [ -n "${hostCuda:-}" ]; then
  # nvcc's own headers (fatbinary_section.h, ...) come with it; the target's win where both have one.
  mkdir -p "$out/include"
  for entry in "$hostCuda"/include/* "$wheelCuda"/include/*; do ln -sfn "$entry" "$out/include/"; done
else
  ln -s "$wheelCuda/include" "$out/include"
fi
ln -s "$programs/nvvm" "$out/nvvm"
mkdir -p "$out/lib64"
for lib in "$wheelCuda"/lib/*; do
  ln -s "$lib" "$out/lib64/"
  name=${lib##*/}
  case $name in
    *.so.*) plain=${name%%.so.*}.so; [ -e "$out/lib64/$plain" ] || ln -s "$name" "$out/lib64/$plain" ;;
  esac
done
mkdir -p "$out/lib64/stubs"
ln -s lib64 "$out/lib"
# A cross home also has the target's directory (targets/sbsa-linux), where CMake's
# FindCUDA and FindCUDAToolkit look for the target's headers and libraries.
if [ -n "${cudaTarget:-}" ]; then
  mkdir -p "$out/targets/$cudaTarget"
  ln -s ../../include "$out/targets/$cudaTarget/include"
  ln -s ../../lib64 "$out/targets/$cudaTarget/lib"
fi
"$out/bin/nvcc" --version | tail -2
