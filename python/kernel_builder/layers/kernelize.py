"""``kernelize``: bind kernel forwards onto a model's marked layers.

For each marked module the decision is: the condition (per instance), then either the
selector (per instance) or the mapping table (layer name -> device type -> capability
range -> mode fallback order), then load + validate the kernel layer (once per
repository and layer class) and bind its ``forward`` onto the instance. The class
forward is never touched, so kernelizing again (or with another mapping) can revert.
"""

from __future__ import annotations

import logging
from types import MethodType
from typing import TYPE_CHECKING, Any

from kernel_builder.errors import KernelBuilderError
from kernel_builder.layers import mapping as _mapping
from kernel_builder.layers.device import DEVICE_TYPES, Device, DeviceType
from kernel_builder.layers.errors import LayerError, LayerValidationError, SelectorError
from kernel_builder.layers.mode import (
    KernelizeFallback,
    Mode,
    as_fallback,
    check_kernelize_mode,
    fallback_order,
)
from kernel_builder.layers.validation import supports_mode, validate_layer

if TYPE_CHECKING:
    import torch
    from torch import nn

__all__ = ["kernelize"]

logger = logging.getLogger("kernel_builder.layers")

_F = KernelizeFallback
_LOADED: dict[tuple[Any, type], type] = {}


def _load_layer(repo: Any, replaces: type) -> type:
    """Load ``repo``'s layer and validate it against ``replaces`` (memoised per pair)."""
    key = (repo, replaces)
    layer = _LOADED.get(key)
    if layer is None:
        layer = repo.load()
        validate_layer(layer=layer, replaces=replaces, repo=repo)
        _LOADED[key] = layer
    return layer


def _in_context(exc: BaseException, context: str) -> BaseException:
    """The same kind of error with ``context`` added to its message (as is when it cannot be)."""
    if isinstance(exc, KernelBuilderError):
        try:
            return type(exc)(f"{exc.message}\n({context})", hint=exc.hint)
        except TypeError:
            return exc
    return exc


def _resolve_device(model: nn.Module, device: Any) -> Device:
    if device is None:
        try:
            param = next(model.parameters())
        except StopIteration:
            raise LayerError(
                "Cannot determine model device, provide as `device` argument to `kernelize`.",
                hint='for example kernelize(model, mode=Mode.INFERENCE, device="cuda")',
            ) from None
        return _from_torch_type(param.device.type)
    if isinstance(device, Device):
        return device
    if isinstance(device, str):
        if device not in DEVICE_TYPES:
            raise LayerError(
                f"Unsupported device type '{device}'. Supported device types are: "
                f"{', '.join(sorted(DEVICE_TYPES))}",
                hint="pass a device type without an index, e.g. 'cuda' rather than 'cuda:0'",
            )
        return Device(type=device)
    return _from_torch_type(device.type)


def _from_torch_type(kind: str) -> Device:
    """A torch device type as a mapping's device type: torch calls a ROCm GPU ``cuda``
    (PyPI ``kernels`` 0.19.1 maps both parameters and a passed ``torch.device`` so)."""
    if kind == "cuda":
        import torch  # lazy: torch loads on first use, never with import kernel_builder or the CLI

        if torch.version.hip is not None:
            return Device(type="rocm")
    return Device(type=kind)


def _selector_device(device: Any, resolved: Device) -> Any:
    """What selectors get as ``device_type``: its ``.type`` is always the device type kernelized for.

    A ``torch.device`` where torch knows that type, else a ``DeviceType`` (``rocm``, which
    torch calls ``cuda``, and types whose torch plug-in is not loaded).
    """
    import torch  # lazy: torch loads on first use, never with import kernel_builder or the CLI

    if resolved.type == "rocm":
        return DeviceType("rocm")
    if isinstance(device, torch.device):
        return device
    try:
        return torch.device(resolved.type)
    except RuntimeError:
        return DeviceType(resolved.type)


# The forward to bind, and the repository it came from (``None``: the module's own forward).
Picked = tuple[Any, Any]


class _Kernelizer:
    """One kernelize call: its request, and the decisions shared by instances of a class."""

    def __init__(self, *, mode: Mode, device: Device, torch_device: Any, fallback: KernelizeFallback):
        self.mode = mode
        self.device = device
        self.torch_device = torch_device
        self.fallback = fallback
        self.state = _mapping.current_mapping()
        self.disabled = _mapping.mapping_disabled()
        self.table_forward: dict[type, Picked] = {}

    # -- outcome helpers -------------------------------------------------------------
    def _or_original(self, cls: type, case: KernelizeFallback, message: str, hint: str) -> Picked:
        if case not in self.fallback:
            raise LayerError(message, hint=hint)
        return cls.forward, None

    def _choose(self, cls: type, layer_name: str, repo: Any, repo_mode: Mode) -> Picked:
        """Load, validate and mode-check ``repo``; the forward to bind (and ``repo`` when it
        is the kernel's)."""
        logger.info("Using layer `%s` from %s (registered for %s)", layer_name, repo, repo_mode)
        try:
            layer = _load_layer(repo, cls)
        except FileNotFoundError as exc:
            if _F.CANNOT_LOAD in self.fallback:
                logger.info("Kernel for `%s` could not be loaded; keeping the original forward", layer_name)
                return cls.forward, None
            raise _in_context(exc, f"while loading layer `{layer_name}` from {repo}") from exc
        except (LayerError, LayerValidationError):
            raise  # these already name the layer and the repository
        except KernelBuilderError as exc:
            raise _in_context(exc, f"while loading layer `{layer_name}` from {repo}") from exc
        if not supports_mode(layer, self.mode):
            if _F.NO_COMPATIBLE_MODE not in self.fallback:
                lacks = "backward" if Mode.TRAINING in self.mode and not getattr(layer, "has_backward", True) else "torch.compile"
                raise LayerError(
                    f"Available kernel does not support mode: {self.mode} "
                    f"(layer `{layer_name}` from {repo} does not support {lacks}, needed for mode `{self.mode}`)",
                    hint="allow fallback, register another kernel for this mode, or kernelize for another mode",
                )
            return cls.forward, None
        return layer.forward, repo

    # -- the two ways to pick a repository -------------------------------------------
    def _from_table(self, cls: type, layer_name: str, table: dict[str, Any]) -> Picked:
        repos = table.get(self.device.type)
        if repos is None:
            return self._or_original(
                cls, _F.NO_DEVICE,
                f"No layer mapping for `{layer_name}` with device type `{self.device}`",
                f"add a `{self.device.type}` entry to the mapping for `{layer_name}`",
            )
        options = repos.lookup()
        if options is None:
            return self._or_original(
                cls, _F.NO_COMPATIBLE_PROPERTIES,
                f"No layer mapping for `{layer_name}` device `{self.device}` with the right properties",
                "no registered capability range contains this device's capability",
            )
        for candidate in fallback_order(self.mode):
            repo = options.get(candidate)
            if repo is not None:
                return self._choose(cls, layer_name, repo, candidate)
        return self._or_original(
            cls, _F.NO_COMPATIBLE_MODE,
            f"No repository for `{layer_name}` for configuration mode={self.mode}",
            f"registered modes: {', '.join(str(m) for m in options) or 'none'}",
        )

    def _from_selector(self, module: Any, cls: type, layer_name: str, sel: Any) -> Picked:
        try:
            picked = sel.select(module, device_type=self.torch_device, mode=self.mode)
        except Exception as exc:
            raise SelectorError(
                f"Layer selector `{sel.name}` for layer `{layer_name}` raised "
                f"{type(exc).__name__}: {exc}",
                hint="the selector is called as select(module, *, device_type, mode)",
            ) from exc
        if picked is None:
            return cls.forward, None
        if not (
            isinstance(picked, tuple)
            and len(picked) == 2
            and _mapping.is_repository(picked[0])
            and isinstance(picked[1], Mode)
        ):
            raise SelectorError(
                f"Layer selector `{sel.name}` for layer `{layer_name}` returned {picked!r}; "
                "expected a (repository, Mode) tuple or None",
                hint="return e.g. (LayerRepository(...), Mode.INFERENCE), or None to keep the original",
            )
        repo, repo_mode = picked
        if repo_mode not in fallback_order(self.mode):
            return self._or_original(
                cls, _F.NO_COMPATIBLE_MODE,
                f"Layer selector `{sel.name}` for layer `{layer_name}` picked {repo} for "
                f"{repo_mode}, which cannot serve mode={self.mode}",
                f"usable modes, best first: {', '.join(str(m) for m in fallback_order(self.mode))}",
            )
        return self._choose(cls, layer_name, repo, repo_mode)

    @staticmethod
    def _holds(condition: Any, module: Any, cls: type) -> bool:
        try:
            return bool(condition(module))
        except Exception as exc:
            name = getattr(condition, "__qualname__", repr(condition))
            raise LayerError(
                f"Condition `{name}` for layer `{cls.kernel_layer_name}` raised "  # type: ignore[attr-defined]
                f"{type(exc).__name__}: {exc}",
                hint="conditions get the module instance and must return a bool",
            ) from exc

    # -- per module ------------------------------------------------------------------
    def forward_for(self, module: Any) -> Picked:
        cls = type(module)
        if self.disabled:
            return cls.forward, None
        condition = getattr(cls, "kernel_condition", None)
        if condition is not None and not self._holds(condition, module, cls):
            logger.info("Condition false for a `%s` instance; keeping its forward", cls.__name__)
            return cls.forward, None
        cached = self.table_forward.get(cls)
        if cached is not None:
            return cached
        layer_name = str(cls.kernel_layer_name)
        entry = self.state.get(layer_name)
        if entry is None:
            logger.warning(
                "No kernel mapping found for layer `%s`; using its original forward.", layer_name
            )
            picked = self._or_original(
                cls, _F.NO_LAYER,
                f"No layer mapping for `{layer_name}`",
                f"register a mapping for `{layer_name}` or allow fallback",
            )
        elif isinstance(entry, _mapping.LayerSelector):
            return self._from_selector(module, cls, layer_name, entry)
        else:
            picked = self._from_table(cls, layer_name, entry)
        self.table_forward[cls] = picked
        return picked


def kernelize(
    model: nn.Module,
    *,
    mode: Mode,
    device: str | torch.device | Device | None = None,
    use_fallback: bool | KernelizeFallback = True,
) -> nn.Module:
    """Replace the forward of every marked layer in ``model`` by its mapped kernel's.

    ``device`` defaults to the type of the model's first parameter. ``use_fallback``
    says when a layer may keep its own forward instead of raising (see
    ``KernelizeFallback``). Returns ``model`` (modified in place).
    """
    check_kernelize_mode(mode)
    resolved = _resolve_device(model, device)
    run = _Kernelizer(
        mode=mode,
        device=resolved,
        torch_device=_selector_device(device, resolved),
        fallback=as_fallback(use_fallback),
    )
    seen_funcs: set[int] = set()
    for _, module in model.named_modules():
        funcs = module.__dict__.get("_kernel_funcs")
        if funcs:
            for func in funcs.values():
                if id(func) not in seen_funcs:
                    seen_funcs.add(id(func))
                    _bind(func, *run.forward_for(func))
        if hasattr(type(module), "kernel_layer_name"):
            _bind(module, *run.forward_for(module))
    return model


def _bind(module: Any, forward: Any, repo: Any) -> None:
    # Straight into __dict__: a bound method is neither parameter, buffer nor submodule.
    module.__dict__["forward"] = MethodType(forward, module)
    # Which repository the kernel came from (``get_kernelized_layers``); none when the
    # module keeps its own forward.
    if repo is None:
        module.__dict__.pop("_kernel_repo", None)
    else:
        module.__dict__["_kernel_repo"] = repo
