# A cross target's torch environment: the target's wheels (torch for manylinux_2_28
# aarch64) unpacked by pip into a site-packages directory (pip of the store Python,
# offline, for the target's platform tags: nothing here runs on this machine), and the
# CMake toolchain file that builds against it with the cross compiler. CMake reads the
# file from $CMAKE_TOOLCHAIN_FILE (the toolchain's environment, see pinned.nix), so the
# driver's CMake invocation is the same as for x86_64.
source "$libSh"
mkdir -p wheels
for wheel in $wheels; do ln -s "$wheel" "wheels/${wheel#*-}"; done
sp="$out/lib/python3.11/site-packages"
install_wheels_for_machine "$sp" $pipPlatforms wheels/*.whl  # the locked wheels' own tags (parts.nix)
[ -f "$sp/torch/share/cmake/Torch/TorchConfig.cmake" ]
cat > "$out/toolchain.cmake" <<CMAKE
# Cross toolchain for $triple (written by kernel-builder's cross-env-builder.sh).
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR $machine)
set(CMAKE_C_COMPILER "$ccLink/bin/gcc")
set(CMAKE_CXX_COMPILER "$ccLink/bin/g++")
set(CMAKE_AR "$cc/bin/ar" CACHE FILEPATH "")
set(CMAKE_RANLIB "$cc/bin/ranlib" CACHE FILEPATH "")
set(CMAKE_STRIP "$cc/bin/strip" CACHE FILEPATH "")
# The target's torch (its CMake package and libraries), not the build Python's.
set(Torch_DIR "$sp/torch/share/cmake/Torch" CACHE PATH "")
set(Caffe2_DIR "$sp/torch/share/cmake/Caffe2" CACHE PATH "")
# The CUDA home of the toolchain (x86_64 nvcc, the target's CUDA libraries): torch's CUDA
# build looks for it (FindCUDA) even for CPU variants.
if(DEFINED ENV{CUDA_HOME})
  set(CUDA_TOOLKIT_ROOT_DIR "\$ENV{CUDA_HOME}" CACHE PATH "")
endif()
# torch's GPU probe (a try_run of a target program, which cannot run here) answers as on a
# machine without a GPU, which the sandbox is: the probe failed.
set(run_result 1 CACHE STRING "")
set(run_result__TRYRUN_OUTPUT "" CACHE STRING "")
# The target's NVRTC, which torch's CUDA package links (the driver passes the build
# Python's only when not cross-building).
if(EXISTS "$sp/nvidia/cu13/lib/libnvrtc.so.13")
  set(CUDA_nvrtc_LIBRARY "$sp/nvidia/cu13/lib/libnvrtc.so.13" CACHE FILEPATH "")
endif()
# The target's Python headers; the build Python (x86_64) only runs CMake's probes.
set(Python3_INCLUDE_DIR "$cc/usr/include/python3.11" CACHE PATH "")
CMAKE
echo "cross env: $(ls "$sp" | tr '\n' ' ')"
