"""Host toolchains (``--toolchain host``, ``build --local``): discover the Python
environments with torch on this machine, record them, and set them up."""
