# A CUDA home in the layout nvcc and CMake expect, made from the CUDA wheels of a Python
# environment (nvidia/cu13): nvcc's bin/ copied (nvcc finds nvcc.profile and ../lib64
# relative to itself), include/ and nvvm/ linked, lib64/ with the unversioned library
# names (libcudart.so ...) that link lines and FindCUDAToolkit ask for.
source "$libSh"
mkdir -p "$out"
cp -r "$wheelCuda/bin" "$out/bin"
ln -s "$wheelCuda/include" "$out/include"
ln -s "$wheelCuda/nvvm" "$out/nvvm"
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
"$out/bin/nvcc" --version | tail -2
