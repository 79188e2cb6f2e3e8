"""An AVL-balanced tree of inclusive integer intervals, queried by point.

Capability ranges are few, but a user may register many; lookups stay logarithmic in
the number of ranges that cannot contain the point.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Generic, TypeVar

__all__ = ["IntervalTree"]

T = TypeVar("T")


class _Node(Generic[T]):
    __slots__ = ("start", "end", "payload", "max_end", "height", "left", "right")

    def __init__(self, start: int, end: int, payload: T) -> None:
        self.start = start
        self.end = end
        self.payload = payload
        self.max_end = end
        self.height = 1
        self.left: _Node[T] | None = None
        self.right: _Node[T] | None = None


def _height(node: _Node | None) -> int:
    return node.height if node is not None else 0


def _update(node: _Node) -> None:
    node.height = 1 + max(_height(node.left), _height(node.right))
    node.max_end = node.end
    for child in (node.left, node.right):
        if child is not None and child.max_end > node.max_end:
            node.max_end = child.max_end


def _rotate_right(node: _Node) -> _Node:
    pivot = node.left
    assert pivot is not None
    node.left, pivot.right = pivot.right, node
    _update(node)
    _update(pivot)
    return pivot


def _rotate_left(node: _Node) -> _Node:
    pivot = node.right
    assert pivot is not None
    node.right, pivot.left = pivot.left, node
    _update(node)
    _update(pivot)
    return pivot


def _balance(node: _Node) -> _Node:
    _update(node)
    skew = _height(node.left) - _height(node.right)
    if skew > 1:
        assert node.left is not None
        if _height(node.left.left) < _height(node.left.right):
            node.left = _rotate_left(node.left)
        return _rotate_right(node)
    if skew < -1:
        assert node.right is not None
        if _height(node.right.right) < _height(node.right.left):
            node.right = _rotate_right(node.right)
        return _rotate_left(node)
    return node


def _insert(node: _Node[T] | None, start: int, end: int, payload: T) -> _Node[T]:
    if node is None:
        return _Node(start, end, payload)
    key, node_key = (start, end), (node.start, node.end)
    if key == node_key:
        node.payload = payload
        return node
    if key < node_key:
        node.left = _insert(node.left, start, end, payload)
    else:
        node.right = _insert(node.right, start, end, payload)
    return _balance(node)


class IntervalTree(Generic[T]):
    """Inclusive ``[start, end]`` intervals with payloads; one payload per distinct interval."""

    def __init__(self) -> None:
        self._root: _Node[T] | None = None

    def insert(self, start: int, end: int, payload: T) -> None:
        """Add an interval; inserting the same ``(start, end)`` again replaces its payload."""
        self._root = _insert(self._root, start, end, payload)

    def _containing(self, point: int) -> Iterator[_Node[T]]:
        stack = [self._root]
        while stack:
            node = stack.pop()
            if node is None or node.max_end < point:
                continue
            stack.append(node.left)
            if node.start <= point:
                if point <= node.end:
                    yield node
                stack.append(node.right)

    def search(self, point: int) -> list[T]:
        """Payloads of every interval containing ``point``, ordered by interval."""
        nodes = sorted(self._containing(point), key=lambda n: (n.start, n.end))
        return [n.payload for n in nodes]

    def find_smallest_interval(self, point: int) -> T | None:
        """Payload of the narrowest interval containing ``point`` (ties: lowest ``id``)."""
        best: _Node[T] | None = None
        for node in self._containing(point):
            if best is None:
                best = node
                continue
            width, best_width = node.end - node.start, best.end - best.start
            if width < best_width or (width == best_width and id(node.payload) < id(best.payload)):
                best = node
        return best.payload if best is not None else None

    def items(self) -> list[tuple[int, int, T]]:
        """All ``(start, end, payload)`` in key order."""
        out: list[tuple[int, int, T]] = []

        def walk(node: _Node[T] | None) -> None:
            if node is not None:
                walk(node.left)
                out.append((node.start, node.end, node.payload))
                walk(node.right)

        walk(self._root)
        return out

    def copy(self) -> IntervalTree[T]:
        """A tree with the same intervals (payloads shared)."""
        tree: IntervalTree[T] = IntervalTree()
        for start, end, payload in self.items():
            tree.insert(start, end, payload)
        return tree

    @property
    def height(self) -> int:
        return _height(self._root)

    def __len__(self) -> int:
        return len(self.items())
