"""Loading kernels: the public API lives in ``kernel_builder.loader.api``.

Modules, one job each: ``fetch`` (revision -> commit -> variant -> verified download),
``cache`` (cache layout, refs, locks), ``local`` (LOCAL_KERNELS and local trees),
``verify`` (digest check), ``deps`` (python-depends), ``importer`` (import under the
metadata id, registry), ``lockfile`` / ``project`` (kernels.lock), ``info`` (what
``info`` and ``versions`` show). Nothing is imported here, so ``import kernel_builder``
stays cheap.
"""
