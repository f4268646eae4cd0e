"""The "fe-modes" shape family: each link's shapes from its own Hermite element model.

References: the analytic clamped-mass shapes (:class:`shapes.ClampedMass`, the closed form
of the same beam) and the finite-element backend on a fine mesh (:mod:`fem`); the cubic
Hermite element's eigenvalue error is O(h⁴) (Strang & Fix, *An Analysis of the Finite
Element Method*, 1973, §6.3: h^{2(k+1−m)} for cubics, k = 3, on a fourth-order problem,
m = 2). Measured values are quoted next to each tolerance.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pandas as pd
import pytest

import fem
import shapes
from amm import AssumedModesModel
from core import LumpedMass
from core.arm.loads import distal_load, distal_static_moment
from core.arm.presets import lumped_two_link, rrp_translating, space_arm_3link
from studies.config import parse_config
from studies.runner import run_study

JOINTS = [math.pi / 4, -math.pi / 4]


def locked(model, joints=JOINTS, count=3) -> np.ndarray:
    q = model.home()
    q[: len(joints)] = joints
    return model.natural_frequencies(q, "locked", count=count)


def mac(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Modal assurance criterion of matching rows (Allemang & Brown 1982)."""
    return np.sum(a * b, axis=1) ** 2 / (np.sum(a * a, axis=1) * np.sum(b * b, axis=1))


@pytest.mark.parametrize(("mu", "j"), [(0.0, 0.0), (1.0, 0.1), (10.0, 1.0)])
def test_uniform_beam_with_a_tip_mass_gives_the_analytic_clamped_mass_shapes(mu, j):
    """Reference: shapes.ClampedMass(μ, j). 20 modes, default mesh: frequencies to 1e-10
    relative (measured ≤ 3e-13), MAC ≥ 1 − 1e-10 (measured 1 − 3e-15), values to 1e-12 of
    the unit-normalized shapes (measured 3e-13), slopes to 1e-8·β₂₀ (measured 5e-10·β₂₀) and
    curvatures to 1e-5·β₂₀² (measured 1.4e-6·β₂₀²: the elements' w'' converges as h²)."""
    ours, exact = shapes.FeModes(mu, j), shapes.ClampedMass(mu, j)
    np.testing.assert_allclose(ours.betas(20) ** 2, exact.betas(20) ** 2, rtol=1e-10)
    eta = np.linspace(0.0, 1.0, 1001)
    a, b = ours.evaluate(eta, 20), exact.evaluate(eta, 20)
    assert np.all(mac(a, b) >= 1 - 1e-10)
    np.testing.assert_allclose(a, b, atol=1e-12)  # same normalization and sign convention
    top = exact.betas(20)[-1]
    np.testing.assert_allclose(ours.evaluate(eta, 20, 1), exact.evaluate(eta, 20, 1), atol=1e-8 * top)
    np.testing.assert_allclose(ours.evaluate(eta, 20, 2), exact.evaluate(eta, 20, 2), atol=1e-5 * top**2)


def test_shapes_are_orthonormal_with_the_lumped_masses_and_stiffness_is_beta_to_the_fourth():
    """The inner product of shapes.base with the span masses and the tip's static moment:
    the identity to 1e-12 (measured 2e-15); ∫φ''φ'' = β⁴ δ to 1e-12 relative (measured 1e-14);
    the clamp holds exactly and the first n shapes are the same whatever was asked before."""
    family = shapes.FeModes(2.0, 0.5, 0.4, lumped=[(0.3, 0.7, 0.01), (0.65, 0.2)], elements=2048)
    n = 12
    np.testing.assert_allclose(family.inner_product_matrix(n), np.eye(n), atol=1e-12)
    m = family.integrals(n)
    np.testing.assert_allclose(m.stiffness / np.outer(m.betas**2, m.betas**2), np.eye(n), atol=1e-12)
    assert np.all(family.boundary_residuals(n)[:, :2] == 0.0)
    assert np.all(m.tip_value > 0)  # the sign convention
    fresh = shapes.FeModes(2.0, 0.5, 0.4, lumped=[(0.3, 0.7, 0.01), (0.65, 0.2)], elements=2048)
    np.testing.assert_allclose(
        fresh.evaluate(np.linspace(0, 1, 51), 3), family.evaluate(np.linspace(0, 1, 51), 3)
    )


def test_modal_integrals_are_exact_for_the_element_polynomials():
    """Against an independent rule: 12 Gauss points per element of a 64-element mesh
    (exact for the piecewise polynomials, as is the family's 5-point rule): 1e-13."""
    family = shapes.FeModes(1.0, 0.1, lumped=[(0.4, 0.5, 0.0)], elements=64)
    n = 6
    from core.numerics.quadrature import composite_gauss

    points, weights = composite_gauss(family.nodes, 12)
    phi, slope = family.evaluate(points, n), family.evaluate(points, n, 1)
    m = family.integrals(n)
    np.testing.assert_allclose(m.mass, (phi * weights) @ phi.T, atol=1e-13)
    np.testing.assert_allclose(m.slope_products, (slope * weights) @ slope.T, atol=1e-13 * m.betas[-1] ** 2)
    np.testing.assert_allclose(m.first_moment, phi @ (weights * points), atol=1e-13)
    weighted = family.weighted_slope_products(n, lambda e: (1 - e**2) / 2)
    np.testing.assert_allclose(weighted, (slope * weights * (1 - points**2) / 2) @ slope.T, atol=1e-12)


def test_mesh_convergence_is_fourth_order():
    """Frequency error of modes 2…6 against the analytic clamped-mass roots on 32…256 elements:
    the fitted rate is 4 ± 0.1 (the Hermite element's h⁴; measured 3.99–4.00)."""
    exact = shapes.ClampedMass(1.0, 0.1).betas(6) ** 4
    sizes = np.array([32, 64, 128, 256])
    errors = np.array([shapes.FeModes(1.0, 0.1, elements=int(e)).betas(6) ** 4 / exact - 1 for e in sizes])
    assert np.all(errors > 0)  # Ritz: from above
    for mode in range(1, 6):
        rate = -np.polyfit(np.log(sizes), np.log(errors[:, mode]), 1)[0]
        assert 3.9 < rate < 4.1, (mode, rate)


def test_lumped_two_link_arm_against_fem_64():
    """Locked frequencies at (45°, −45°); reference FEM ×64 (its own gap to ×256 is 6e-9).

    fe-modes ×4: ω₁, ω₂ to 1e-7 (measured 4.1e-9, 4.4e-8) but ω₃ only to 1e-4 (measured
    1.67e-5): the shapes of link 1 carry link 2 as a rigid body at its tip, while in the
    third locked mode (321 rad/s) link 2 bends — the error leaves when link 2 is stiffened
    (below). fe-modes ×8 reach 1e-6 on all three (measured 6.3e-8). Clamped-free ×16 is at
    1.2e-2 on ω₂ (measured), so 1e-4 is out of its reach here. This arm has no span masses:
    fe-modes and clamped-mass differ only by the tip's static moment (ω₃ 1.72e-5 vs 1.67e-5)."""
    arm = lumped_two_link()
    reference = locked(fem.FiniteElementModel(arm, elements=64))
    four = locked(AssumedModesModel(arm, shape="fe-modes", modes=4, reference=JOINTS))
    np.testing.assert_allclose(four[:2], reference[:2], rtol=1e-7)
    np.testing.assert_allclose(four[2], reference[2], rtol=1e-4)
    eight = locked(AssumedModesModel(arm, shape="fe-modes", modes=8, reference=JOINTS))
    np.testing.assert_allclose(eight, reference, rtol=1e-6)
    cantilever = locked(AssumedModesModel(arm, shape="clamped-free", modes=16, reference=JOINTS))
    assert np.abs(cantilever / reference - 1).max() > 1e-3


def test_a_rigid_distal_chain_is_what_the_shapes_assume():
    """Link 2 stiffened 1e4× (a rigid body beyond link 1's tip, the load the shapes carry):
    fe-modes ×4 give ω₁, ω₂ of FEM ×64 to 1e-9 (measured 4e-13, 9e-12); without the static
    moment S of the distal body (clamped-mass: tip mass and inertia only) ω₂ is 9.2e-8 off
    (measured), 1e4 times more."""
    arm = lumped_two_link()
    stiff = dataclasses.replace(arm.links[1], EI=arm.links[1].EI * 1e4)
    arm = dataclasses.replace(arm, links=(arm.links[0], stiff))
    reference = locked(fem.FiniteElementModel(arm, elements=64), count=2)
    ours = locked(AssumedModesModel(arm, shape="fe-modes", modes=4, reference=JOINTS), count=2)
    np.testing.assert_allclose(ours, reference, rtol=1e-9)
    without = locked(AssumedModesModel(arm, shape="clamped-mass", modes=4, reference=JOINTS), count=2)
    assert abs(without[1] / reference[1] - 1) > 1e-8
    # S itself: link 2's rod (0.29 kg, centre at L₂/2) and the 0.343 kg payload at L₂, along link 1's
    # axis at a −45° elbow: S = cos 45° (0.29·0.435/2 + 0.343·0.435).
    expected = math.cos(math.pi / 4) * (0.29 * 0.435 / 2 + 0.343 * 0.435)
    assert distal_static_moment(arm, 1, JOINTS) == pytest.approx(expected, rel=1e-12)


def test_span_masses_are_in_the_shapes():
    """The lumped arm with a point mass on each span (0.5 kg at 0.2 m of link 1, 0.2 kg at 0.3 m
    of link 2), against FEM ×256: fe-modes ×4 reach ω₁, ω₂ to 1e-7 (measured 3.8e-9, 5.3e-8)
    and ω₃ to 1e-5 (measured 6.3e-6), better than half the error of clamped-mass ×16 on ω₃
    (measured 1.8e-5; clamped-mass ×4: 1.8e-3)."""
    arm = lumped_two_link()
    links = (
        dataclasses.replace(arm.links[0], lumped_masses=(LumpedMass(0.2, 0.5, 1e-4),)),
        dataclasses.replace(arm.links[1], lumped_masses=(LumpedMass(0.3, 0.2),)),
    )
    arm = dataclasses.replace(arm, links=links)
    reference = locked(fem.FiniteElementModel(arm, elements=256))
    four = locked(AssumedModesModel(arm, shape="fe-modes", modes=4, reference=JOINTS))
    sixteen = locked(AssumedModesModel(arm, shape="clamped-mass", modes=16, reference=JOINTS))
    assert abs(four[2] / reference[2] - 1) < 1e-5
    assert abs(four[2] / reference[2] - 1) < 0.5 * abs(sixteen[2] / reference[2] - 1)
    np.testing.assert_allclose(four[:2], reference[:2], rtol=1e-7)
    # The model hands the family the link's span masses as ratios.
    description = AssumedModesModel(arm, shape="fe-modes", modes=2, reference=JOINTS).bases[1].description
    assert f"lumped=(({0.2 / 0.475!r}, " in description


def test_spatial_arm_both_bending_planes():
    """Space arm with EI_out = 4 EI (the planes split): fe-modes ×6 and FEM ×32 agree on the
    first six locked frequencies to 1e-4 (measured 2.0e-5 in both planes; as on the lumped
    arm the distal links' elasticity, which the rigid tip load leaves out, sets the error).
    The shapes do not depend on EI (a uniform link), so both planes share them, as with the
    other families."""
    arm = space_arm_3link()
    links = tuple(dataclasses.replace(link, EI_out=4 * link.EI) for link in arm.links)
    arm = dataclasses.replace(arm, links=links)
    reference = locked(fem.FiniteElementModel(arm, elements=32), [0.0, 0.0, 0.0], count=6)
    ours = locked(AssumedModesModel(arm, shape="fe-modes", modes=6), [0.0, 0.0, 0.0], count=6)
    np.testing.assert_allclose(ours, reference, rtol=1e-4)
    assert np.all(np.diff(reference) > 1e-3 * reference[1:])  # no pair is degenerate any more


def test_the_tip_load_comes_from_the_arm():
    arm = lumped_two_link()
    mass, inertia = distal_load(arm, 1, JOINTS)
    link = arm.links[0]
    model = AssumedModesModel(arm, shape="fe-modes", modes=2, reference=JOINTS)
    description = model.bases[1].description
    assert f"mass_ratio={mass / (link.mass_per_length * link.length)!r}" in description
    assert f"inertia_ratio={inertia / (link.mass_per_length * link.length**3)!r}" in description
    # A given parameter overrides, the others still come from the arm.
    coarse = AssumedModesModel(arm, shapes={1: ("fe-modes", 2, {"elements": 64}), 2: ("fe-modes", 2)})
    assert "elements=64" in coarse.bases[1].description
    assert "mass_ratio=0.0" not in coarse.bases[1].description


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"mass_ratio": -1.0}, r"mass_ratio must be >= 0.*-1\.0"),
        ({"elements": 2}, r"elements must be an integer >= 4, got 2"),
        ({"lumped": [(1.5, 0.1)]}, r"lumped\[1\] position must be in \[0, 1\].*1\.5"),
        ({"lumped": [(0.5, -0.1)]}, r"lumped\[1\] mass_ratio must be >= 0.*-0\.1"),
        ({"lumped": [(0.5,)]}, r"lumped\[1\] must be \(position, mass_ratio"),
        ({"mass_ratio": 1.0, "inertia_ratio": 0.1, "moment_ratio": 0.5}, r"moment_ratio must satisfy.*0\.5"),
    ],
)
def test_bad_parameters_name_the_field_and_the_value(params, message):
    with pytest.raises(ValueError, match=message):
        shapes.family("fe-modes", **params)


def test_refusals():
    family = shapes.FeModes(elements=16)
    with pytest.raises(ValueError, match="derivative must be 0, 1, 2 or 3, got 4"):
        family.evaluate(0.5, 2, 4)
    with pytest.raises(
        ValueError, match=r"shapes\[3\]: family must be one of .* translating link, got 'fe-modes'"
    ):
        AssumedModesModel(rrp_translating(), shape="fe-modes", modes=2)
    assert "fe-modes" not in shapes.translating_families()
    assert "fe-modes" in shapes.fixed_length_families()


def test_a_study_sweeps_fe_modes_beside_the_other_families(tmp_path):
    data = {
        "study": {"name": "fe-modes-frequencies", "kind": "frequencies"},
        "arm": {"preset": "one-flexible-link"},
        "sweep": {
            "backends": ["amm", "fem"],
            "shapes": ["clamped-free", "fe-modes"],
            "modes": [3],
            "elements": [8],
        },
        "analysis": {"n_frequencies": 2},
        "report": {"formats": ["csv"], "plots": False},
    }
    result = run_study(parse_config(data), output=tmp_path / "out")
    assert result.ok, result.failed
    results = pd.read_csv(result.folder / "results.csv")
    amm = results[results["backend"] == "amm"].set_index(["shape", "mode"])["omega"]
    # The arm's payload is the tip load: fe-modes are lower (closer to the truth) than cantilever shapes.
    assert np.all(amm["fe-modes"].to_numpy() < amm["clamped-free"].to_numpy())
    assert results[results["backend"] == "fem"]["shape"].unique().tolist() == ["clamped"]
