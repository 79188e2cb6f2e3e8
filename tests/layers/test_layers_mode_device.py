"""Mode unions, kernelize-mode checks, Device/properties validation and the interval tree."""

from __future__ import annotations

import random
import sys

import pytest
from hypothesis import given
from hypothesis import strategies as st
from kernel_builder.errors import KernelBuilderError
from kernel_builder.layers import CUDAProperties, Device, KernelizeFallback, Mode, ROCMProperties
from kernel_builder.layers.errors import LayerError, ModeError
from kernel_builder.layers.interval_tree import IntervalTree
from kernel_builder.layers.mode import as_fallback, check_kernelize_mode, fallback_order


class TestMode:
    def test_valid_unions(self):
        assert Mode.INFERENCE | Mode.TORCH_COMPILE == Mode(Mode.INFERENCE.value | Mode.TORCH_COMPILE.value)
        assert Mode.TRAINING | Mode.TORCH_COMPILE in {Mode.TORCH_COMPILE | Mode.TRAINING}

    def test_inference_and_training_exclusive(self):
        with pytest.raises(ModeError, match="mutually exclusive") as info:
            Mode.INFERENCE | Mode.TRAINING
        assert isinstance(info.value, ValueError) and isinstance(info.value, KernelBuilderError)
        assert info.value.hint

    @pytest.mark.parametrize("other", [Mode.TRAINING, Mode.INFERENCE, Mode.TORCH_COMPILE])
    def test_fallback_alone(self, other):
        with pytest.raises(ValueError, match="cannot be combined"):
            Mode.FALLBACK | other
        with pytest.raises(ValueError, match="cannot be combined"):
            other | Mode.FALLBACK

    def test_kernelize_modes(self):
        for ok in (Mode.INFERENCE, Mode.TRAINING, Mode.INFERENCE | Mode.TORCH_COMPILE,
                   Mode.TRAINING | Mode.TORCH_COMPILE):
            check_kernelize_mode(ok)
        with pytest.raises(ValueError, match="can only be used to register kernel mappings"):
            check_kernelize_mode(Mode.FALLBACK)
        with pytest.raises(ValueError, match="must contain Mode.INFERENCE or Mode.TRAINING"):
            check_kernelize_mode(Mode.TORCH_COMPILE)

    def test_fallback_orders(self):
        I, T, C, F = Mode.INFERENCE, Mode.TRAINING, Mode.TORCH_COMPILE, Mode.FALLBACK
        assert fallback_order(I) == (I, I | C, T, T | C, F)
        assert fallback_order(T) == (T, T | C, F)
        assert fallback_order(I | C) == (I | C, T | C, F)
        assert fallback_order(T | C) == (T | C, F)
        with pytest.raises(ValueError, match="Unsupported mode"):
            fallback_order(Mode(Mode.INFERENCE.value | Mode.FALLBACK.value))

    def test_use_fallback_normalised(self):
        assert as_fallback(True) == KernelizeFallback.DEFAULT
        assert as_fallback(False) == KernelizeFallback.NONE
        assert as_fallback(KernelizeFallback.ALL) == KernelizeFallback.ALL
        assert KernelizeFallback.CANNOT_LOAD not in KernelizeFallback.DEFAULT


class TestDevice:
    def test_equality_and_hash(self):
        a = Device("cuda", CUDAProperties(min_capability=75, max_capability=90))
        b = Device(type="cuda", properties=CUDAProperties(75, 90))
        assert a == b and hash(a) == hash(b)
        assert a != Device("cuda")
        assert CUDAProperties(75, 90) != ROCMProperties(75, 90)

    def test_range_must_be_ordered(self):
        with pytest.raises(ValueError, match="must be <= max_capability"):
            CUDAProperties(min_capability=90, max_capability=80)
        with pytest.raises(ValueError, match="must be <= max_capability"):
            ROCMProperties(min_capability=2, max_capability=1)

    @pytest.mark.parametrize("bad", ["86", 8.6, True, None])
    def test_capability_must_be_int(self, bad):
        with pytest.raises(ValueError, match="must be an int"):
            CUDAProperties(min_capability=bad, max_capability=90)

    def test_properties_match_type(self):
        with pytest.raises(ValueError, match="only supported for 'cuda'"):
            Device("rocm", CUDAProperties(1, 2))
        with pytest.raises(ValueError, match="only supported for 'rocm'"):
            Device("cuda", ROCMProperties(1, 2))
        with pytest.raises(ValueError, match="must be CUDAProperties"):
            Device("cuda", (75, 90))
        with pytest.raises(LayerError, match="must be a str"):
            Device(3)

    def test_frozen(self):
        import attrs

        with pytest.raises(attrs.exceptions.FrozenInstanceError):
            Device("cpu").type = "cuda"


def _brute_smallest(intervals, point):
    matches = [(e - s, id(p), p) for s, e, p in intervals if s <= point <= e]
    return min(matches, key=lambda m: (m[0], m[1]))[2] if matches else None


class TestIntervalTree:
    def _fixture(self):
        tree = IntervalTree()
        payloads = {}
        for s, e in [(80, 89), (86, 89), (80, 86), (70, 75), (86, 87)]:
            payloads[(s, e)] = object()
            tree.insert(s, e, payloads[(s, e)])
        return tree, payloads

    def test_smallest_interval(self):
        tree, p = self._fixture()
        assert tree.find_smallest_interval(86) is p[(86, 87)]
        assert tree.find_smallest_interval(88) is p[(86, 89)]
        assert tree.find_smallest_interval(81) is p[(80, 86)]
        assert tree.find_smallest_interval(72) is p[(70, 75)]
        assert tree.find_smallest_interval(76) is None
        assert tree.find_smallest_interval(90) is None

    def test_search(self):
        tree, p = self._fixture()
        assert tree.search(86) == [p[(80, 86)], p[(80, 89)], p[(86, 87)], p[(86, 89)]]
        assert tree.search(60) == []

    def test_reinsert_replaces(self):
        tree = IntervalTree()
        tree.insert(0, sys.maxsize, "a")
        tree.insert(0, sys.maxsize, "b")
        assert len(tree) == 1 and tree.find_smallest_interval(5) == "b"

    def test_balanced(self):
        tree = IntervalTree()
        for i in range(1024):
            tree.insert(i, i + 10, i)
        assert tree.height <= 11  # a perfectly balanced tree of 1024 nodes has height 11

    def test_copy_is_independent(self):
        tree, p = self._fixture()
        copy = tree.copy()
        copy.insert(86, 86, "x")
        assert copy.find_smallest_interval(86) == "x"
        assert tree.find_smallest_interval(86) is p[(86, 87)]

    @given(
        st.lists(st.tuples(st.integers(0, 60), st.integers(0, 20)), max_size=40),
        st.integers(-5, 90),
    )
    def test_matches_brute_force(self, spans, point):
        tree = IntervalTree()
        latest = {}
        for start, width in spans:
            payload = object()
            tree.insert(start, start + width, payload)
            latest[(start, start + width)] = payload
        intervals = [(s, e, p) for (s, e), p in latest.items()]
        assert tree.find_smallest_interval(point) is _brute_smallest(intervals, point)
        assert set(map(id, tree.search(point))) == {id(p) for s, e, p in intervals if s <= point <= e}

    def test_random_inserts_stay_balanced(self):
        rng = random.Random(7)
        tree = IntervalTree()
        for _ in range(2000):
            s = rng.randrange(1000)
            tree.insert(s, s + rng.randrange(50), None)
        assert tree.height <= 1.45 * (len(tree).bit_length() + 1)
