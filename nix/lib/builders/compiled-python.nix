# The driver's Python package as the variant steps import it. For the pinned toolchain it
# is bytecode-compiled once, by the driver's own Python: the store is read-only, so every
# plan, object, link and variant step compiled the modules it imports again (~0.2 s a
# step). unchecked-hash .pyc files are used as they are, whatever the store's timestamps.
# Only for the pinned toolchain (gen-flake-outputs.nix decides).
#
# Type: { pythonSrc : path; system : string } -> pinned toolchain -> derivation
{ pythonSrc, system }:
toolchain:
derivation {
  name = "kernel-builder-python-compiled";
  inherit system pythonSrc;
  # Through the toolchain's bash: the driver's Python finds its environment from the path
  # it was started by, and Nix starts a builder as its bare name.
  builder = toolchain.builder;
  args = [ "-c" ''exec "$driverPython" -c "$compile" "$pythonSrc"'' ];
  inherit (toolchain) driverPython;
  compile = ''
    import compileall, os, py_compile, shutil, sys
    out = os.environ["out"]
    shutil.copytree(sys.argv[1], out, copy_function=shutil.copyfile)
    for root, dirs, _ in os.walk(out):
        os.chmod(root, 0o755)
    ok = compileall.compile_dir(out, quiet=1, workers=1,
                                invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH)
    sys.exit(0 if ok else 1)
  '';
}
