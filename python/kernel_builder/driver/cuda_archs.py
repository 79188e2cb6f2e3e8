"""CUDA architectures: moved to ``kernel_builder.backends.cuda_archs`` (the CUDA backend
owns its architectures); this name stays for the modules and tests that import it here."""

from kernel_builder.backends.cuda_archs import *  # noqa: F401,F403
from kernel_builder.backends.cuda_archs import __all__  # noqa: F401
