"""Inputs at the public boundary are taken exactly or refused (issue 13, part 4).

Huge ids and report values say "too large" with the file/row instead of Python's int-string
limit message; numpy booleans are refused like Python booleans; 2**53 + 1 written as a string
or a Decimal is not rounded to 2**53; quantity names spelled with non-ASCII digits are refused;
power_variance_estimate is finite where the truth fits in float64, and the CLI tells an
overflowed standard error from a missing one.
"""

from __future__ import annotations

import decimal
import math
import warnings
from fractions import Fraction

import mpmath
import numpy as np
import pytest

from ldpgraph._validation import canonical_quantity, check_epsilon, check_integer_reports, exact_number
from ldpgraph.cli import main
from ldpgraph.estimators.polynomials import power_variance_estimate
from ldpgraph.graph.edgelist import parse_edgelist
from ldpgraph.protocols.ingest import reports_from_records

BIG = 2**53 + 1  # 9007199254740993: float64 rounds it to 2**53


def _rows(value=3, eps=1.0, sens=1, quantity="degree"):
    return [
        {"node": 0, "quantity": "degree", "value": 5, "epsilon": 1.0, "sensitivity": 1},
        {"node": 1, "quantity": quantity, "value": value, "epsilon": eps, "sensitivity": sens},
    ]


# ------------------------------------------------------------------ exact_number


@pytest.mark.parametrize("v", ["9007199254740993", " 9007199254740993 ", decimal.Decimal("9007199254740993"),
                               Fraction(BIG), np.int64(BIG), BIG, "9007199254740993.000"])
def test_exact_number_keeps_2_53_plus_1(v):
    out = exact_number(v)
    assert type(out) is int and out == BIG


def test_exact_number_refusals():
    for b in (True, np.bool_(False)):
        with pytest.raises(TypeError, match="boolean"):
            exact_number(b)
    with pytest.raises(ValueError, match="too large: a number of 5000 digits"):
        exact_number("9" * 5000)  # no int() conversion of the string is attempted
    with pytest.raises(ValueError, match="too large"):
        exact_number(decimal.Decimal("1e100000"))
    with pytest.raises(ValueError, match="too large"):
        exact_number(10**5000)
    with pytest.raises(ValueError, match="not a number"):
        exact_number("\u0662")  # an Arabic-Indic digit two: not read as 2
    with pytest.raises(ValueError, match="not finite"):
        exact_number("nan")
    assert exact_number("2.5") == 2.5 and exact_number("1e3") == 1000


# ------------------------------------------------------------------ ingestion of report rows


def test_ingest_value_2_53_plus_1_is_refused_not_rounded():
    # BIG > 2**53, the documented bound: refused whether sent as int, string or Decimal; it used
    # to pass as a string or Decimal, rounded to exactly 2**53
    for v in (BIG, str(BIG), decimal.Decimal(BIG), -BIG, str(-BIG)):
        with pytest.raises(ValueError, match=r"too large.*row 1"):
            reports_from_records(_rows(value=v))
    # 2**53 itself, written exactly, is kept exactly
    rep = reports_from_records(_rows(value=str(2**53)))
    assert rep.degrees.values.tolist() == [5, 2**53]
    rep = reports_from_records(_rows(value=decimal.Decimal(2**53 - 1)))
    assert rep.degrees.values.tolist() == [5, 2**53 - 1]


def test_ingest_huge_value_says_too_large_with_row():
    with pytest.raises(ValueError, match=r"value is too large.*row 1"):
        reports_from_records(_rows(value="7" * 5000))
    with pytest.raises(ValueError, match=r"value is too large.*row 1"):
        reports_from_records(_rows(value=10**5000))


@pytest.mark.parametrize("field", ["value", "eps", "sens"])
def test_ingest_refuses_numpy_bool(field):
    with pytest.raises(ValueError, match=r"must be numeric: row 1"):
        reports_from_records(_rows(**{field: np.bool_(True)}))


def test_numpy_bool_refused_as_epsilon_and_report():
    with pytest.raises(TypeError, match="epsilon"):
        check_epsilon(np.bool_(True))
    with pytest.raises(TypeError):
        check_integer_reports(np.array([True, False]))


def test_quantity_names_with_unicode_digits_are_refused():
    with pytest.raises(ValueError, match=r"row 1: quantity 'kstar_\u0662' must be spelled with ASCII"):
        reports_from_records(_rows(quantity="kstar_\u0662", sens=4), d_max=5)
    with pytest.raises(ValueError, match="row 1: quantity 'kstar_02'"):
        reports_from_records(_rows(quantity="kstar_02", sens=4), d_max=5)
    assert canonical_quantity("kstar_12") == "kstar_12"
    with pytest.raises(ValueError, match="ASCII"):
        canonical_quantity("degr\u00e9e")


# ------------------------------------------------------------------ edge lists


def test_edge_list_id_longer_than_the_int_string_limit():
    data = b"1 2\n3 " + b"9" * 5000 + b"\n"
    with pytest.raises(ValueError, match=r"^g\.txt, line 2: node id a 5000-digit number exceeds 2\*\*63 - 1 "
                                         r"\(too large\)"):
        parse_edgelist(data, source_name="g.txt")


# ------------------------------------------------------------------ overflow is not "none"


def _power_variance_reference(y: int, k: int, eps: float) -> mpmath.mpf:
    """c (f(y+1)-f(y))^2 + c (f(y)-f(y-1))^2 + (c (f(y+1)-2f(y)+f(y-1)))^2, f = y^k, exactly."""
    with mpmath.workdps(60):
        p = mpmath.exp(-mpmath.mpf(eps))
        c = p / (1 - p) ** 2
        fwd, bwd = (y + 1) ** k - y**k, y**k - (y - 1) ** k
        sec = (y + 1) ** k - 2 * y**k + (y - 1) ** k
        return c * fwd**2 + c * bwd**2 + (c * sec) ** 2


@pytest.mark.parametrize(("y", "k", "eps"), [(10**9, 20, 700.0), (10**6, 20, 1.0), (7, 3, 0.5), (-40, 15, 300.0)])
def test_power_variance_estimate_is_finite_where_the_truth_fits(y, k, eps):
    ref = _power_variance_reference(y, k, eps)
    got = power_variance_estimate([y], k, eps)[0]
    assert float(ref) < 1.7e308
    assert got == pytest.approx(float(ref), rel=1e-12)
    if (y, k, eps) == (10**9, 20, 700.0):
        assert 7.8e40 < got < 8.0e40  # used to be inf (the square of 2e172 overflowed first)


def test_cli_prints_overflow_not_dash(capsys, monkeypatch):
    # the estimate command's table: an infinite std_error (the variance overflowed, as for a
    # degree moment j = 120 at epsilon 0.01) prints "overflow"; a missing one (None) prints "-"
    from ldpgraph.experiments import single

    run = single.SingleRun("g", 3, 2, "degree_moment", 120, 0.01, 1, 5.0, (
        single.MethodEstimate("unbiased-dlap", 4.0, math.inf, "unbiased"),
        single.MethodEstimate("naive-dlap", 6.0, None, "none: a plug-in"),
        single.MethodEstimate("other", 5.5, 2.0, "exact"),
    ))
    monkeypatch.setattr(single, "estimate_once", lambda *a, **k: run)
    assert main(["estimate", "ba:n=20,m=2", "--stat", "degree_moment", "--k", "120",
                 "--epsilon", "0.01", "--seed", "1"]) == 0
    out = capsys.readouterr().out
    rows = {line.split()[0]: line.split() for line in out.splitlines() if line.split()}
    assert rows["unbiased-dlap"][2] == "overflow"
    assert rows["naive-dlap"][2] == "-"
    assert rows["other"][2] == "2"
    assert "'overflow' where it exceeds the float range" in out


def test_a_real_moment_variance_overflows_to_inf():
    # for real, at the level the CLI reads: a finite truth (~2e198) whose sd overflows to inf, not None
    from ldpgraph.protocols.statistics import get_statistic

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        sd = get_statistic("degree_moment").analytic_sd(np.array([10**9, 10**9 + 5]), 22, 0.01)
    assert sd == math.inf
