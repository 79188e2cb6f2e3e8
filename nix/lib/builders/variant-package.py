# Make `import <python name>` give a built variant, for the kernel-test runs and the test
# shell (kernel-tests-builder.sh, test-shell.nix), as upstream's test runner sets it up.
#
#   python variant-package.py VARIANT_DIR TARGET
#
# A `files`-layout variant is a package directory: TARGET becomes a symlink to it. A
# zip-layout one (metadata.json "build-layout": "zip") keeps its package in <id>.zip beside
# metadata.json and the compiled module: TARGET becomes a package whose __init__.py runs the
# archive's __init__ and whose submodules come from the variant directory, then the archive
# (the search order PyPI kernels 0.19 gives a zip variant). Stdlib only; runs with the
# variant's toolchain Python.
import json
import os
import sys

variant, target = sys.argv[1], sys.argv[2]
try:
    with open(os.path.join(variant, "metadata.json"), encoding="utf-8") as f:
        metadata = json.load(f)
except (OSError, ValueError):
    metadata = {}
if not isinstance(metadata, dict) or metadata.get("build-layout") != "zip":
    os.symlink(variant, target)
    sys.exit(0)
archive = os.path.join(variant, "%s.zip" % metadata["id"])
os.makedirs(target)
with open(os.path.join(target, "__init__.py"), "w", encoding="utf-8") as f:
    f.write(
        "# Written by kernel-builder: the zip-layout variant %s as this package.\n"
        "import zipimport as _zipimport\n"
        "__path__ = [%r, %r]\n"
        "__file__ = %r\n"
        "exec(_zipimport.zipimporter(%r).get_code('__init__'), globals())\n"
        % (variant, variant, archive, archive + "/__init__.py", archive)
    )
