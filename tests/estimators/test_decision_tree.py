"""Tests for ldpgraph.estimators.decision_trees.

References: ``debias_nd`` of scikit-learn's own ``predict`` / ``predict_proba`` on the 3^d
integer points around each report (the brute-force operator (2)), the same sum in exact
rational arithmetic (per-feature c allowed), and exact expectations over the DLap pmf.
The float64 brute force has an absolute rounding error up to N u sum |f w| (N = 3^d terms);
the tolerance against it allows that bound plus 1e-9 relative.
"""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import numpy as np
import pytest
from dlap_exact import exact_expectation_nd

import ldpgraph.estimators.decision_trees as dt_mod
from ldpgraph._validation import dlap_c
from ldpgraph.estimators.decision_trees import ThresholdTree, decision_tree, decision_tree_variance
from ldpgraph.estimators.operator import debias_nd


def _sk():
    """scikit-learn's tree module; only these tests need it (the package does not)."""
    return pytest.importorskip("sklearn.tree")


U = 2.0**-53


def _cube(d):
    return np.array(list(itertools.product([-1, 0, 1], repeat=d)), dtype=np.int64).reshape(-1, d)


def _exact_operator(f, y, cs):
    """Operator (2) with per-coordinate c, in exact rational arithmetic (f float valued)."""
    y = np.asarray(y, dtype=np.int64)
    xi = _cube(y.size)
    vals = np.asarray(f(y + xi), dtype=np.float64)
    total = Fraction(0)
    cf = [Fraction(c) for c in cs]
    for row, v in zip(xi, vals, strict=True):
        w = Fraction(1)
        for j, s in enumerate(row):
            w *= (1 + 2 * cf[j]) if s == 0 else -cf[j]
        total += w * Fraction(float(v))
    return total


def _abs_sum(f, y, c):
    """sum_xi |f(y + xi) w_xi|: the scale of every term of (2)."""
    xi = _cube(len(y))
    w = np.prod(np.where(xi == 0, 1 + 2 * c, c), axis=1)
    return float(np.abs(np.asarray(f(np.asarray(y) + xi), dtype=float)) @ w)


def _bound(f, y, c):
    """Rigorous rounding bound N u sum |f w| of the float64 brute force (N = 3^d terms)."""
    return 3 ** len(y) * U * _abs_sum(f, y, c)


def _fit(rng, kind, d, depth, outputs=1):
    x = rng.integers(-4, 8, size=(60, d))
    if kind == "reg":
        target = x @ rng.normal(size=(d, outputs)) + rng.normal(size=(60, outputs))
        est = _sk().DecisionTreeRegressor(max_depth=depth, random_state=0)
        return est.fit(x, target[:, 0] if outputs == 1 else target)
    target = rng.integers(0, 3, size=60)
    return _sk().DecisionTreeClassifier(max_depth=depth, random_state=0).fit(x, target)


def _predict_fn(est, d, kind, j=None):
    def f(z):
        flat = z.reshape(-1, d)
        out = est.predict(flat) if kind == "reg" else est.predict_proba(flat)[:, j]
        return out.reshape(z.shape[:-1])

    return f


# ---------------------------------------------------------------------------------------------
# against brute force


@pytest.mark.parametrize("seed", range(6))
def test_sklearn_trees_match_bruteforce(seed):
    rng = np.random.default_rng(seed)
    d = int(rng.integers(1, 5))
    depth = int(rng.integers(1, 5))
    eps = [0.3, 1.0, 2.0][seed % 3]
    c = dlap_c(eps)
    reg, clf = _fit(rng, "reg", d, depth), _fit(rng, "clf", d, depth)
    y = rng.integers(-6, 10, size=(4, d))
    got_r = decision_tree(reg, y, eps)
    got_c = decision_tree(clf, y, eps)
    assert got_r.shape == (4,) and got_c.shape == (4, 3)
    np.testing.assert_allclose(got_c.sum(-1), 1.0, rtol=0, atol=1e-12 * (1 + 2 * c) ** d)
    for i, row in enumerate(y):
        cases = [(got_r[i], _predict_fn(reg, d, "reg"))]
        cases += [(got_c[i, j], _predict_fn(clf, d, "clf", j)) for j in range(3)]
        for got, f in cases:
            brute = float(debias_nd(f, row, eps))
            assert abs(got - brute) <= 1e-9 * abs(brute) + _bound(f, row, c)
            exact = float(_exact_operator(f, row, [c] * d))
            # the fast form rounds ~u per leaf term; the leaf terms are bounded by sum |f w|
            assert abs(got - exact) <= 1e-13 * (1 + _abs_sum(f, row, c))


def test_deep_tree_against_dense_leaf_box_formula():
    # A deep tree (hundreds of leaves) on few features: the cube descent must find every leaf
    # with a non-zero weight. References: the brute force, and the dense formula
    # sum over ALL leaves of v_leaf prod_j w(y_j; lo_j, hi_j) from the documented leaf boxes.
    rng = np.random.default_rng(12)
    x = rng.integers(0, 40, size=(3000, 2))
    target = np.sin(x[:, 0] / 3.0) * x[:, 1] + (x[:, 0] % 5)
    reg = _sk().DecisionTreeRegressor(max_depth=14, random_state=0).fit(x, target)
    tree = ThresholdTree.from_sklearn(reg)
    assert reg.get_n_leaves() > 300
    y = rng.integers(-2, 42, size=(400, 2))
    eps = 0.5
    c = dlap_c(eps)
    got = decision_tree(reg, y, eps)
    dense = np.zeros(len(y))
    for (_, box), v in zip(tree.leaf_boxes(), tree.leaf_values()[:, 0, 0], strict=True):
        w = np.ones(len(y))
        for j, (lo, hi) in box.items():
            ind = [((y[:, j] + s >= lo) & (y[:, j] + s <= hi)).astype(float) for s in (-1, 0, 1)]
            w *= ind[1] - c * (ind[0] - 2 * ind[1] + ind[2])
        dense += v * w
    np.testing.assert_allclose(got, dense, rtol=1e-12, atol=1e-12 * np.abs(target).max())
    brute = debias_nd(_predict_fn(reg, 2, "reg"), y, eps)
    np.testing.assert_allclose(got, brute, rtol=1e-10, atol=1e-10 * np.abs(target).max())


def test_multioutput_regressor_and_shapes():
    rng = np.random.default_rng(10)
    reg = _fit(rng, "reg", 3, 3, outputs=2)
    y = rng.integers(-4, 8, size=(2, 5, 3))
    got = decision_tree(reg, y, 1.0)
    assert got.shape == (2, 5, 2)
    for k in range(2):

        def f(z, k=k):
            return reg.predict(z.reshape(-1, 3))[:, k].reshape(z.shape[:-1])

        np.testing.assert_allclose(got[..., k], debias_nd(f, y, 1.0), rtol=1e-9, atol=1e-9)
    # predict agrees with sklearn on integer points (the noise-free reference)
    tree = ThresholdTree.from_sklearn(reg)
    np.testing.assert_allclose(tree.predict(y), reg.predict(y.reshape(-1, 3)).reshape(2, 5, 2))
    assert decision_tree(reg, y[0, 0], 1.0).shape == (2,)


def test_per_feature_epsilon_exact():
    rng = np.random.default_rng(11)
    reg = _fit(rng, "reg", 3, 4)
    eps = np.array([0.4, 1.5, 3.0])
    cs = [dlap_c(e) for e in eps]
    f = _predict_fn(reg, 3, "reg")
    for row in rng.integers(-5, 9, size=(5, 3)):
        got = float(decision_tree(reg, row, eps))
        exact = float(_exact_operator(f, row, cs))
        assert got == pytest.approx(exact, rel=1e-12, abs=1e-12)
    # per-feature sensitivity: epsilon_j / sensitivity_j is what counts
    row = np.array([1, 2, 3])
    assert float(decision_tree(reg, row, 1.2, sensitivity=[3.0, 0.8, 0.4])) == pytest.approx(
        float(decision_tree(reg, row, [0.4, 1.5, 3.0])), rel=1e-13
    )


# ---------------------------------------------------------------------------------------------
# exact unbiasedness


@pytest.mark.parametrize(("d", "eps"), [(1, 0.3), (2, 1.0), (3, 2.0)])
def test_exactly_unbiased_with_unbiased_variance(d, eps):
    rng = np.random.default_rng(20 + d)
    reg, clf = _fit(rng, "reg", d, 3), _fit(rng, "clf", d, 3)
    x = rng.integers(-2, 5, size=d)
    for est in (reg, clf):
        truth = ThresholdTree.from_sklearn(est).predict(x)
        mean = [
            exact_expectation_nd(
                lambda z, k=k, est=est: np.asarray(decision_tree(est, z, eps)).reshape(len(z), -1)[:, k],
                x,
                eps,
            )
            for k in range(np.size(truth))
        ]
        np.testing.assert_allclose(mean, np.ravel(truth), atol=1e-9)
        for k in range(np.size(truth)):

            def g(z, k=k, est=est):
                return np.asarray(decision_tree(est, z, eps)).reshape(len(z), -1)[:, k]

            def v(z, k=k, est=est):
                return np.asarray(decision_tree_variance(est, z, eps)).reshape(len(z), -1)[:, k]

            e_g2 = exact_expectation_nd(lambda z, g=g: g(z) ** 2, x, eps)
            e_v = exact_expectation_nd(v, x, eps)
            assert e_v == pytest.approx(e_g2 - np.ravel(truth)[k] ** 2, rel=1e-8, abs=1e-8)


# ---------------------------------------------------------------------------------------------
# structure and plain descriptions


def test_nested_description_boxes_and_repeated_feature():
    # x0 <= 5 -> (x1 <= 0 -> 1.0 | x0 <= 2.7 -> 2.0 | 3.0) | 4.0
    tree = ThresholdTree.from_nested(
        {
            "feature": 0,
            "threshold": 5,
            "left": {
                "feature": 1,
                "threshold": 0.0,
                "left": {"value": 1.0},
                "right": {"feature": 0, "threshold": 2.7, "left": {"value": 2.0}, "right": {"value": 3.0}},
            },
            "right": {"value": 4.0},
        }
    )
    boxes = tree.leaf_boxes()
    assert [b[0] for b in boxes] == [2, 4, 5, 6]
    assert boxes[2][1] == {0: (3.0, 5.0), 1: (1.0, math.inf)}  # two splits on x0 intersect
    pts = np.array([[0, 0], [2, 1], [3, 1], [5, 9], [6, -3], [-100, 100]])
    np.testing.assert_array_equal(tree.predict(pts), [1, 2, 3, 3, 4, 2])
    # exact check of the box weights on a point touching every boundary
    c = dlap_c(0.8)
    f = tree.predict
    for row in pts[:5]:
        assert float(decision_tree(tree, row, 0.8)) == pytest.approx(
            float(_exact_operator(f, row, [c, c])), rel=1e-13
        )
    # reports >= 2 away from every threshold reproduce the leaf value exactly
    assert decision_tree(tree, [[-10, -10], [20, 0], [4, 7]], 0.3).tolist() == [1.0, 4.0, 3.0]
    # constants are reproduced exactly by every tree (the leaf weights sum to 1)
    const = ThresholdTree(
        tree.children_left, tree.children_right, tree.feature, tree.threshold, np.full(7, 5.0)
    )
    np.testing.assert_allclose(decision_tree(const, pts, 0.3), 5.0, rtol=1e-12)


def test_nested_classifier_normalises_class_weights():
    tree = ThresholdTree.from_nested(
        {"feature": 0, "threshold": 0.5, "left": {"value": [3.0, 1.0]}, "right": {"value": [0.0, 2.0]}},
        is_classifier=True,
    )
    np.testing.assert_allclose(tree.predict([[0], [1]]), [[0.75, 0.25], [0.0, 1.0]])
    c = dlap_c(1.0)
    # y = 0: left weight 1 + c, right weight -c
    np.testing.assert_allclose(
        decision_tree(tree, [0], 1.0), [0.75 * (1 + c), 0.25 * (1 + c) - c], rtol=1e-13
    )
    assert decision_tree(tree, [[0], [1], [5]], 1.0).sum(-1) == pytest.approx([1, 1, 1], rel=1e-13)


def test_vector_leaf_values_are_outputs_of_a_regressor():
    tree = ThresholdTree.from_nested(
        {"feature": 0, "threshold": 0.5, "left": {"value": [1.0, 2.0]}, "right": {"value": [3.0, 5.0]}}
    )
    c = dlap_c(1.0)
    np.testing.assert_allclose(tree.predict([[0], [1]]), [[1, 2], [3, 5]])
    np.testing.assert_allclose(
        decision_tree(tree, [1], 1.0), [3 * (1 + c) - c, 5 * (1 + c) - 2 * c], rtol=1e-13
    )


def test_single_leaf_and_infinite_threshold():
    leaf = ThresholdTree.from_nested({"value": 7.0})
    assert decision_tree(leaf, [[1, 2], [3, 4]], 0.5).tolist() == [7.0, 7.0]
    inf = ThresholdTree.from_nested(
        {"feature": 0, "threshold": np.inf, "left": {"value": 1.0}, "right": {"value": 9.0}}
    )
    assert decision_tree(inf, [[10**6]], 0.5).tolist() == [1.0]


def test_bare_sklearn_tree_and_chunking(monkeypatch):
    rng = np.random.default_rng(30)
    clf = _fit(rng, "clf", 2, 4)
    y = rng.integers(-5, 9, size=(1000, 2))
    full = decision_tree(clf, y, 1.0)
    np.testing.assert_array_equal(decision_tree(clf.tree_, y, 1.0), full)  # duck-typed tree_
    monkeypatch.setattr(dt_mod, "_CHUNK", 7)
    np.testing.assert_array_equal(decision_tree(clf, y, 1.0), full)


# ---------------------------------------------------------------------------------------------
# bad inputs


def _stump(**kw):
    base = dict(
        children_left=[1, -1, -1],
        children_right=[2, -1, -1],
        feature=[0, -2, -2],
        threshold=[0.5, -2.0, -2.0],
        value=[0.0, 1.0, 2.0],
    )
    base.update(kw)
    return ThresholdTree(**base)


@pytest.mark.parametrize(
    ("call", "exc", "match"),
    [
        (
            lambda: _stump(children_left=[1, 2, -1], children_right=[2, -1, -1]),
            ValueError,
            "exactly one child",
        ),
        (
            lambda: _stump(children_left=[1, 0, -1], children_right=[2, 0, -1], feature=[0, 0, -2]),
            ValueError,
            "reached twice",
        ),
        (lambda: _stump(children_left=[5, -1, -1]), ValueError, "out of range"),
        (lambda: _stump(threshold=[np.nan, 0, 0]), ValueError, "nan threshold"),
        (lambda: _stump(feature=[-1, -2, -2]), ValueError, "invalid feature"),
        (lambda: _stump(value=np.zeros((2, 1))), ValueError, "value must have shape"),
        (lambda: _stump(feature=[0.5, -2, -2]), TypeError, "feature"),
        (
            lambda: _stump(children_left=[], children_right=[], feature=[], threshold=[], value=[]),
            ValueError,
            "node",
        ),
        (lambda: ThresholdTree.from_nested({"feature": 0, "left": {"value": 1}}), ValueError, "threshold"),
        (lambda: decision_tree(object(), [1], 1.0), TypeError, "decision tree"),
        (lambda: decision_tree(_stump(), [[1.5]], 1.0), ValueError, "not an integer"),
        (lambda: decision_tree(_stump(n_features=2), [[1]], 1.0), ValueError, "2 features"),
        (lambda: decision_tree(_stump(feature=[3, -2, -2]), [[1, 2]], 1.0), ValueError, "feature 3"),
        (lambda: decision_tree(_stump(), [[1, 2]], [1.0, 2.0, 3.0]), ValueError, r"shape \(2,\)"),
        (lambda: decision_tree(_stump(), [[1, 2]], [1.0, -2.0]), ValueError, "epsilon"),
        (lambda: decision_tree(_stump(), [[1, 2]], 1.0, sensitivity=0), ValueError, "sensitivity"),
    ],
)
def test_bad_inputs(call, exc, match):
    with pytest.raises(exc, match=match):
        call()
