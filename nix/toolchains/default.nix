# Toolchain providers, one file each. A provider turns a build set into what the variant
# derivation needs; the matrix and the derivation never look inside a toolchain.
#
# Provider type:
#   { recorded : parsed toolchain JSON or null; system : string }
#   -> buildSet : { key; torch; backend; backendVersion }
#   -> { available : bool; reason : string; builder : bash to run builders with;
#        driverPython; toolchainPython; env : attrs of strings (PATH, CUDA_HOME, ...);
#        identity : attrs of strings (with toolchainProvider);
#        testSite (optional) : [check package] -> site-packages drv | null }
#   (testSite: where the kernel-test packages come from; without it the kernel's tests
#   run with the toolchain Python as it is, which must have pytest.)
#
# `identity` goes into the derivation verbatim: any change in it rebuilds the variant,
# nothing outside it does.
{
  host = import ./host.nix;
  pinned = import ./pinned.nix;
}
