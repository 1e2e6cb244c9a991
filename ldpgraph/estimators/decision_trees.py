r"""Unbiased estimates of a threshold decision tree's output at the true integer point.

A fitted tree maps x in Z^d to the value of the leaf whose axis-aligned box contains x:
T(x) = sum_leaves v_leaf 1[x in box_leaf]. The operator (2) of
:mod:`ldpgraph.estimators.operator` is linear and factorizes over coordinates, so for a box
prod_j [lo_j, hi_j] (integer intervals, possibly unbounded)

.. math::

    \widehat{T}(y) = \sum_{\text{leaves}} v_\text{leaf}\, W_\text{leaf}(y),\qquad
    W_\text{leaf}(y) = \prod_{j\ \text{split on}} w(y_j; lo_j, hi_j),\qquad
    w(z; lo, hi) = \sum_{\xi\in\{-1,0,1\}:\ lo \le z+\xi \le hi} \alpha_\xi ,

with alpha_0 = 1 + 2c, alpha_{+-1} = -c (coordinates a leaf does not split on contribute
sum_xi alpha_xi = 1). Only leaves whose box meets the cube y + {-1,0,1}^d have a non-zero
weight; they are found by pushing the cube down the tree (splitting it where a threshold cuts
it), so the cost per row is O(depth x leaves met) -- at most O(leaves x depth), and typically
a few leaves -- instead of 3^d evaluations.

Splits follow scikit-learn: go left iff x[feature] <= threshold (a float); for integer x this
is x <= floor(threshold). (scikit-learn compares float32 copies of X, which agrees for
|x| <= 2^24.)
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._validation import check_epsilon, check_integer_reports, check_sensitivity, dlap_c

__all__ = ["ThresholdTree", "decision_tree", "decision_tree_variance"]

_LEAF = -1
# Push at most this many (row, feature) report values down the tree at once.
_CHUNK = 2_000_000


@dataclass(frozen=True, eq=False)
class ThresholdTree:
    r"""A binary tree of threshold splits, in scikit-learn's array layout.

    Node 0 is the root. For an internal node i, ``x[feature[i]] <= threshold[i]`` sends x to
    ``children_left[i]``, otherwise to ``children_right[i]``; a leaf has both children -1 and
    predicts ``value[i]``.

    Parameters
    ----------
    children_left, children_right : array_like of int, shape (node_count,)
        Child indices, -1 at leaves.
    feature : array_like of int, shape (node_count,)
        Feature index split on (ignored at leaves; scikit-learn stores -2 there).
    threshold : array_like of float, shape (node_count,)
        Split thresholds (ignored at leaves). Must not be nan.
    value : array_like of float, shape (node_count,), (node_count, k) or (node_count, n_outputs, k)
        Leaf values (scikit-learn's layout is the 3-D one): regression values (k = 1) or, for
        classifiers, class counts or fractions, normalised per output to probabilities on use.
        A 2-D value holds k class weights for a classifier and k outputs for a regressor.
        Stored with 3 dimensions.
    is_classifier : bool, default False
        Whether leaf values are class weights to be turned into probabilities.
    n_features : int or None
        Number of input features, if known (checked against the reports).

    Examples
    --------
    A stump on feature 0 at 2.5 with leaf values 10 and 20, written as nested dicts:

    >>> tree = ThresholdTree.from_nested(
    ...     {"feature": 0, "threshold": 2.5, "left": {"value": 10.0}, "right": {"value": 20.0}})
    >>> tree.predict([[2], [3]])
    array([10., 20.])
    >>> tree.leaf_boxes()
    [(1, {0: (-inf, 2.0)}), (2, {0: (3.0, inf)})]
    """

    children_left: NDArray[np.intp]
    children_right: NDArray[np.intp]
    feature: NDArray[np.intp]
    threshold: NDArray[np.float64]
    value: NDArray[np.float64]
    is_classifier: bool = False
    n_features: int | None = None
    _boxes: list = field(init=False, repr=False, compare=False)
    _cut: NDArray[np.float64] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        left = _int_array(self.children_left, "children_left")
        right = _int_array(self.children_right, "children_right")
        feat = _int_array(self.feature, "feature")
        thr = np.asarray(self.threshold, dtype=np.float64)
        val = np.asarray(self.value, dtype=np.float64)
        m = left.shape[0]
        if m == 0:
            raise ValueError("a tree needs at least one node, got node_count = 0")
        for name, arr in (("children_right", right), ("feature", feat), ("threshold", thr)):
            if arr.shape != (m,):
                raise ValueError(f"{name} must have shape ({m},) like children_left, got {arr.shape}")
        if val.ndim == 1:
            val = val[:, None, None]
        elif val.ndim == 2:
            val = val[:, None, :] if self.is_classifier else val[:, :, None]
        if val.ndim != 3 or val.shape[0] != m or val.shape[2] == 0:
            raise ValueError(
                f"value must have shape ({m},), ({m}, k) or ({m}, n_outputs, k), got {np.shape(self.value)}"
            )
        n_feat = self.n_features
        if n_feat is not None:
            n_feat = int(n_feat)
        object.__setattr__(self, "children_left", left)
        object.__setattr__(self, "children_right", right)
        object.__setattr__(self, "feature", feat)
        object.__setattr__(self, "threshold", thr)
        object.__setattr__(self, "value", val)
        object.__setattr__(self, "is_classifier", bool(self.is_classifier))
        object.__setattr__(self, "n_features", n_feat)
        object.__setattr__(self, "_boxes", _leaf_boxes(left, right, feat, thr, n_feat))
        with np.errstate(invalid="ignore"):
            # integer x <= threshold  <=>  x <= floor(threshold)  (+-inf stay)
            object.__setattr__(self, "_cut", np.floor(thr))

    # -- construction ---------------------------------------------------------------------------

    @classmethod
    def from_sklearn(cls, estimator: Any) -> ThresholdTree:
        """From a fitted ``DecisionTreeRegressor`` / ``DecisionTreeClassifier`` (or its ``tree_``).

        Duck-typed: anything with a ``tree_`` holding ``children_left``, ``children_right``,
        ``feature``, ``threshold`` and ``value`` arrays. An estimator with ``classes_`` is a
        classifier; a bare ``tree_`` is one if some output has more than one class.
        """
        tree = getattr(estimator, "tree_", estimator)
        missing = [
            a
            for a in ("children_left", "children_right", "feature", "threshold", "value")
            if not hasattr(tree, a)
        ]
        if missing:
            raise TypeError(
                f"expected a fitted scikit-learn decision tree (or its tree_), got "
                f"{type(estimator).__name__} without {', '.join(missing)}"
            )
        if hasattr(estimator, "tree_"):
            is_clf = hasattr(estimator, "classes_")
        else:
            is_clf = bool(np.max(np.atleast_1d(getattr(tree, "n_classes", [1]))) > 1)
        n_feat = getattr(estimator, "n_features_in_", getattr(tree, "n_features", None))
        return cls(
            children_left=np.asarray(tree.children_left),
            children_right=np.asarray(tree.children_right),
            feature=np.asarray(tree.feature),
            threshold=np.asarray(tree.threshold),
            value=np.asarray(tree.value),
            is_classifier=is_clf,
            n_features=n_feat,
        )

    @classmethod
    def from_nested(cls, node: Mapping[str, Any], *, is_classifier: bool = False) -> ThresholdTree:
        """From nested dicts: ``{"feature": j, "threshold": t, "left": {...}, "right": {...}}``
        for splits and ``{"value": v}`` for leaves. v is a number, or a sequence (class weights
        if ``is_classifier``, else one value per output); all leaves alike.
        """
        left: list[int] = []
        right: list[int] = []
        feat: list[int] = []
        thr: list[float] = []
        vals: list[Any] = []

        def add(nd: Mapping[str, Any]) -> int:
            if not isinstance(nd, Mapping):
                raise TypeError(f"tree nodes must be dicts, got {type(nd).__name__}")
            i = len(left)
            left.append(_LEAF)
            right.append(_LEAF)
            if "value" in nd:
                feat.append(-2)
                thr.append(-2.0)
                vals.append(nd["value"])
                return i
            missing = [key for key in ("feature", "threshold", "left", "right") if key not in nd]
            if missing:
                raise ValueError(
                    "a split node needs 'feature', 'threshold', 'left', 'right' (a leaf needs 'value'); "
                    f"missing {', '.join(repr(m) for m in missing)}"
                )
            feat.append(int(nd["feature"]))
            thr.append(float(nd["threshold"]))
            vals.append(None)
            left[i] = add(nd["left"])
            right[i] = add(nd["right"])
            return i

        add(node)
        leaf_vals = [np.atleast_1d(np.asarray(v, dtype=np.float64)) for v in vals if v is not None]
        k = leaf_vals[0].shape
        if any(v.shape != k for v in leaf_vals):
            raise ValueError("all leaf values must have the same shape")
        value = np.zeros((len(vals),) + k)
        for i, v in enumerate(vals):
            if v is not None:
                value[i] = np.asarray(v, dtype=np.float64)
        return cls(np.array(left), np.array(right), np.array(feat), np.array(thr), value, is_classifier)

    # -- inspection -----------------------------------------------------------------------------

    def leaf_boxes(self) -> list[tuple[int, dict[int, tuple[float, float]]]]:
        """Leaves in depth-first order with their integer boxes {feature: (lo, hi)} (inclusive,
        +-inf for unbounded); features absent from a box are unconstrained."""
        return [(leaf, {j: (lo, hi) for j, lo, hi in cons}) for leaf, cons in self._boxes]

    def leaf_values(self) -> NDArray[np.float64]:
        """Leaf outputs in ``leaf_boxes`` order, shape (leaves, n_outputs, k); class weights are
        normalised to probabilities for classifiers (an all-zero row stays zero, as in sklearn)."""
        v = self.value[[leaf for leaf, _ in self._boxes]]
        if self.is_classifier:
            s = v.sum(axis=-1, keepdims=True)
            v = v / np.where(s == 0.0, 1.0, s)
        return v

    def predict(self, x: ArrayLike) -> NDArray[np.float64]:
        """The tree's output at integer points x (shape (..., n_features)), noise-free.

        Output shape as in :func:`decision_tree`.
        """
        xx = check_integer_reports(x, "x", min_ndim=1)
        rows = xx.reshape(-1, xx.shape[-1])
        self._check_width(rows.shape[-1])
        table = np.zeros((rows.shape[-1], 8))
        table[:, _BIT0] = 1.0  # only the zero shift: plain evaluation
        r, node, w = _descend(self, rows, table, _BIT0)
        return self._aggregate(r, node, w, rows.shape[0], xx.shape[:-1])

    # -- internals ------------------------------------------------------------------------------

    def _check_width(self, d: int) -> None:
        need = 1 + max((j for _, cons in self._boxes for j, _, _ in cons), default=-1)
        if self.n_features is not None and d != self.n_features:
            raise ValueError(f"y must have {self.n_features} features in its last axis, got {d}")
        if d < need:
            raise ValueError(f"the tree splits on feature {need - 1}; y has only {d} features")

    def _aggregate(
        self,
        r: NDArray[np.intp],
        node: NDArray[np.intp],
        w: NDArray[np.float64],
        nrows: int,
        batch: tuple[int, ...],
        power: int = 1,
    ) -> NDArray[np.float64]:
        """sum over the (row, leaf, weight) triples of weight * value_leaf^power, shaped."""
        v = self.value[node]
        if self.is_classifier:
            tot = v.sum(axis=-1, keepdims=True)
            v = v / np.where(tot == 0.0, 1.0, tot)
        _, n_out, k = self.value.shape
        terms = (v**power).reshape(node.size, n_out * k) * w[:, None]
        out = np.empty((nrows, n_out * k))
        for q in range(n_out * k):
            out[:, q] = np.bincount(r, weights=terms[:, q], minlength=nrows)
        out = out.reshape(nrows, n_out, k)
        if not self.is_classifier:
            out = out[..., 0]
        if n_out == 1:
            out = out[:, 0]
        return out.reshape(batch + out.shape[1:])


def _int_array(a: ArrayLike, name: str) -> NDArray[np.intp]:
    arr = np.asarray(a)
    if arr.dtype.kind not in "iu" and not (arr.dtype.kind == "f" and np.all(arr == np.round(arr))):
        raise TypeError(f"{name} must be an integer array, got dtype {arr.dtype}")
    return arr.astype(np.intp)


def _leaf_boxes(
    left: NDArray[np.intp],
    right: NDArray[np.intp],
    feat: NDArray[np.intp],
    thr: NDArray[np.float64],
    n_features: int | None,
) -> list[tuple[int, list[tuple[int, float, float]]]]:
    """Depth-first list of (leaf, [(feature, lo, hi), ...]) with inclusive integer bounds."""
    m = left.shape[0]
    seen = np.zeros(m, dtype=bool)
    out: list[tuple[int, list[tuple[int, float, float]]]] = []
    stack: list[tuple[int, dict[int, tuple[float, float]]]] = [(0, {})]
    while stack:
        node, box = stack.pop()
        if not 0 <= node < m:
            raise ValueError(f"child index {node} out of range [0, {m})")
        if seen[node]:
            raise ValueError(f"node {node} is reached twice: the arrays do not describe a tree")
        seen[node] = True
        lc, rc = int(left[node]), int(right[node])
        if lc == _LEAF or rc == _LEAF:
            if lc != rc:
                raise ValueError(f"node {node} has exactly one child ({lc}, {rc}); leaves have both -1")
            out.append((node, sorted((j, lo, hi) for j, (lo, hi) in box.items())))
            continue
        j, t = int(feat[node]), float(thr[node])
        if j < 0 or (n_features is not None and j >= n_features):
            raise ValueError(f"node {node} splits on invalid feature {j}")
        if math.isnan(t):
            raise ValueError(f"node {node} has a nan threshold")
        cut = float(math.floor(t)) if math.isfinite(t) else t  # integer x <= t  <=>  x <= floor(t)
        lo, hi = box.get(j, (-math.inf, math.inf))
        rbox = dict(box)
        rbox[j] = (max(lo, cut + 1), hi)
        lbox = dict(box)
        lbox[j] = (lo, min(hi, cut))
        stack.append((rc, rbox))
        stack.append((lc, lbox))
    return out


def _as_tree(tree: Any) -> ThresholdTree:
    if isinstance(tree, ThresholdTree):
        return tree
    if isinstance(tree, Mapping):
        return ThresholdTree.from_nested(tree)
    return ThresholdTree.from_sklearn(tree)


def _stencil_c(epsilon: Any, sensitivity: Any, d: int) -> NDArray[np.float64]:
    """c per feature from scalar or per-feature epsilon / sensitivity."""
    e = np.asarray(epsilon, dtype=object) if not np.isscalar(epsilon) else None
    s = np.asarray(sensitivity, dtype=object) if not np.isscalar(sensitivity) else None
    if e is None and s is None:
        return np.full(d, dlap_c(check_epsilon(epsilon), check_sensitivity(sensitivity)))
    eps = [check_epsilon(v, "epsilon") for v in (e.ravel() if e is not None else [epsilon])]
    sens = [check_sensitivity(v, "sensitivity") for v in (s.ravel() if s is not None else [sensitivity])]
    for name, vals, arr in (("epsilon", eps, e), ("sensitivity", sens, s)):
        if arr is not None and (arr.ndim != 1 or len(vals) != d):
            raise ValueError(
                f"{name} must be a scalar or have shape ({d},) (one per feature), got {arr.shape}"
            )
    eps_b = np.broadcast_to(np.array(eps), (d,))
    sens_b = np.broadcast_to(np.array(sens), (d,))
    return np.array([dlap_c(a, b) for a, b in zip(eps_b.tolist(), sens_b.tolist(), strict=True)])


# Shift sets as 3-bit masks: bit 1 for xi = -1, bit 2 for xi = 0, bit 4 for xi = +1.
_BIT0 = 2
_ALL = 7


def _mask_table(c: NDArray[np.float64]) -> NDArray[np.float64]:
    """table[j, mask] = sum of alpha_xi over the shifts in mask, for feature j (alpha from c_j)."""
    t = np.zeros((c.size, 8))
    t[:, 1] = t[:, 4] = -c
    t[:, 2] = 1.0 + 2.0 * c
    t[:, 3] = t[:, 6] = 1.0 + c
    t[:, 5] = -2.0 * c  # {-1, +1}: never produced by threshold splits
    t[:, 7] = 1.0  # all shifts: the alphas sum to 1 (exactly, not 1 + 2c - 2c)
    return t


def _descend(
    tree: ThresholdTree, rows: NDArray[np.int64], table: NDArray[np.float64], init_mask: int
) -> tuple[NDArray[np.intp], NDArray[np.intp], NDArray[np.float64]]:
    r"""Push every row's cube y + {-1,0,1}^d down the tree; return (row, leaf, weight) triples.

    Each frontier entry carries, per feature, the set of shifts xi_j still consistent with the
    path. A split on feature j at cut sends the shifts with y_j + xi_j <= cut left and the rest
    right; an entry whose set becomes empty is dropped. At a leaf the weight is
    prod_j table[j, set_j]: the operator restricted to the leaf's box. Only leaves whose box
    meets the cube are visited, so the cost is O(depth x visited leaves) per row.
    """
    left, right = tree.children_left, tree.children_right
    feat, cut = tree.feature, tree._cut
    m, d = rows.shape
    cols = np.arange(d)
    out_r: list[NDArray[np.intp]] = []
    out_n: list[NDArray[np.intp]] = []
    out_w: list[NDArray[np.float64]] = []
    step = max(1, _CHUNK // max(d, 1))
    for r0 in range(0, m, step):
        block = rows[r0 : r0 + step]
        r = np.arange(block.shape[0])
        node = np.zeros(r.size, dtype=np.intp)
        masks = np.full((r.size, d), init_mask, dtype=np.uint8)
        while r.size:
            at_leaf = left[node] == _LEAF
            if at_leaf.any():
                ml = masks[at_leaf]
                out_w.append(np.prod(table[cols, ml], axis=1) if d else np.ones(ml.shape[0]))
                out_r.append(r[at_leaf] + r0)
                out_n.append(node[at_leaf])
                go = ~at_leaf
                r, node, masks = r[go], node[go], masks[go]
                if not r.size:
                    break
            j = feat[node]
            ct = cut[node]
            yj = block[r, j].astype(np.float64)
            lbits = (
                (yj - 1.0 <= ct).astype(np.uint8)
                | ((yj <= ct).astype(np.uint8) << 1)
                | ((yj + 1.0 <= ct).astype(np.uint8) << 2)
            )
            idx = np.arange(r.size)
            mj = masks[idx, j]
            m_left, m_right = mj & lbits, mj & (lbits ^ _ALL)
            go_l, go_r = m_left != 0, m_right != 0
            masks_l, masks_r = masks[go_l], masks[go_r]
            masks_l[np.arange(masks_l.shape[0]), j[go_l]] = m_left[go_l]
            masks_r[np.arange(masks_r.shape[0]), j[go_r]] = m_right[go_r]
            r = np.concatenate([r[go_l], r[go_r]])
            node = np.concatenate([left[node[go_l]], right[node[go_r]]])
            masks = np.concatenate([masks_l, masks_r])
    if not out_r:
        return np.zeros(0, dtype=np.intp), np.zeros(0, dtype=np.intp), np.zeros(0)
    return np.concatenate(out_r), np.concatenate(out_n), np.concatenate(out_w)


def decision_tree(
    tree: Any,
    y: ArrayLike,
    epsilon: float | ArrayLike,
    sensitivity: float | ArrayLike = 1,
) -> NDArray[np.float64]:
    r"""Unbiased estimate of a threshold decision tree's output at the true point x.

    Parameters
    ----------
    tree : ThresholdTree, fitted scikit-learn DecisionTreeRegressor / DecisionTreeClassifier, its
        ``tree_``, or nested dicts (see :meth:`ThresholdTree.from_nested`).
    y : array_like of int, shape (..., n_features)
        Noisy integer reports of the features, one row per point.
    epsilon : float or array_like of shape (n_features,)
        Privacy parameter(s) of the reports, per feature if an array. Must be in (0, inf).
    sensitivity : float or array_like of shape (n_features,), default 1
        Sensitivity (per feature if an array). Must be in (0, inf).

    Returns
    -------
    ndarray of float64
        Regression: shape (...) (or (..., n_outputs)). Classification: the class-probability
        vector, shape (..., n_classes) (or (..., n_outputs, n_classes)); unbiased for the leaf's
        normalised class weights at x. Entries can leave [0, 1]; each vector sums to 1.

    Raises
    ------
    TypeError
        ``tree`` is not a ThresholdTree, nested dict or fitted scikit-learn tree; non-integer
        reports.
    ValueError
        Malformed tree arrays (see :class:`ThresholdTree`), reports with too few features (or
        not ``n_features``), epsilon / sensitivity not finite and > 0 or an array whose length
        is not n_features.

    Notes
    -----
    .. math:: \widehat T(y) = \sum_\text{leaves} v_\text{leaf} \prod_{j} \big(1[y_j \in I_j]
              - c_j (1[y_j + 1 \in I_j] - 2\cdot 1[y_j \in I_j] + 1[y_j - 1 \in I_j])\big),

    I_j = [lo_j, hi_j] the leaf's integer interval on feature j (product over the features
    the leaf's path splits on). Unbiased: T is a sum of products of one-dimensional indicators
    and the noise is independent across features, so E prod_j w_j = prod_j 1[x_j in I_j].
    The leaf weights sum to 1 (the boxes partition Z^d), so constants are reproduced exactly
    and class-probability estimates sum to 1.

    Examples
    --------
    >>> tree = ThresholdTree.from_nested(
    ...     {"feature": 0, "threshold": 2.5, "left": {"value": 10.0}, "right": {"value": 20.0}})
    >>> decision_tree(tree, [[0], [7]], epsilon=1.0)  # far from the split: the leaf value
    array([10., 20.])
    >>> decision_tree(tree, [2], epsilon=1.0)  # 10 (1 + c) + 20 (-c): y = 2 is next to the split
    array(0.79326406)
    """
    t = _as_tree(tree)
    yy = check_integer_reports(y, min_ndim=1)
    d = yy.shape[-1]
    t._check_width(d)
    c = _stencil_c(epsilon, sensitivity, d)
    rows = yy.reshape(-1, d)
    r, node, w = _descend(t, rows, _mask_table(c), _ALL)
    return t._aggregate(r, node, w, rows.shape[0], yy.shape[:-1])


def decision_tree_variance(
    tree: Any,
    y: ArrayLike,
    epsilon: float | ArrayLike,
    sensitivity: float | ArrayLike = 1,
) -> NDArray[np.float64]:
    r"""Unbiased estimate of the variance of :func:`decision_tree` (elementwise, same shape).

    Notes
    -----
    T(x)^2 = sum_leaves v_leaf^2 1[x in box] (disjoint boxes), so the operator gives
    T[T^2](y) = sum_leaves v_leaf^2 W_leaf(y) and g^2 - T[T^2](y) is unbiased for Var g.

    Examples
    --------
    >>> tree = ThresholdTree.from_nested(
    ...     {"feature": 0, "threshold": 2.5, "left": {"value": 10.0}, "right": {"value": 20.0}})
    >>> decision_tree_variance(tree, [[0]], epsilon=1.0)
    array([0.])
    """
    t = _as_tree(tree)
    yy = check_integer_reports(y, min_ndim=1)
    d = yy.shape[-1]
    t._check_width(d)
    c = _stencil_c(epsilon, sensitivity, d)
    rows = yy.reshape(-1, d)
    r, node, w = _descend(t, rows, _mask_table(c), _ALL)
    g = t._aggregate(r, node, w, rows.shape[0], yy.shape[:-1])
    return g * g - t._aggregate(r, node, w, rows.shape[0], yy.shape[:-1], power=2)
