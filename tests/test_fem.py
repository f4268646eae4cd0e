"""The finite-element backend: element matrices, convergence, agreement with AMM."""

from __future__ import annotations

import itertools
import math
import warnings

import numpy as np
import pytest
import scipy.linalg
import scipy.sparse.linalg

import fem
import shapes
from amm import AssumedModesModel
from core import Arm, Link, LumpedMass, Payload
from core.arm.presets import lumped_two_link, space_arm_3link
from fem.assembly import assemble, element_basis
from fem.deformation import RelativeCoordinates


def test_element_matrices_equal_the_closed_forms():
    """Przemieniecki (1968), §11: consistent mass ρA h/420 [...], stiffness EI/h³ [...];
    load vectors ∫N = h(1/2, h/12, 1/2, −h/12) and ∫sN from ∫ξN = (3/20, h/30, 7/20, −h/20)."""
    h, s0 = 0.37, 0.8
    m = fem.element_matrices(h, s0)
    mass = (
        h
        / 420
        * np.array(
            [
                [156, 22 * h, 54, -13 * h],
                [22 * h, 4 * h**2, 13 * h, -3 * h**2],
                [54, 13 * h, 156, -22 * h],
                [-13 * h, -3 * h**2, -22 * h, 4 * h**2],
            ]
        )
    )
    stiffness = (
        1
        / h**3
        * np.array(
            [
                [12, 6 * h, -12, 6 * h],
                [6 * h, 4 * h**2, -6 * h, 2 * h**2],
                [-12, -6 * h, 12, -6 * h],
                [6 * h, 2 * h**2, -6 * h, 4 * h**2],
            ]
        )
    )
    first = h * np.array([0.5, h / 12, 0.5, -h / 12])
    moment = s0 * first + h**2 * np.array([3 / 20, h / 30, 7 / 20, -h / 20])
    np.testing.assert_allclose(m["mass"], mass, rtol=1e-14, atol=1e-16)
    np.testing.assert_allclose(m["stiffness"], stiffness, rtol=1e-14)
    np.testing.assert_allclose(m["first"], first, rtol=1e-14)
    np.testing.assert_allclose(m["moment"], moment, rtol=1e-14)


def test_one_element_gives_the_exact_static_tip_deflection():
    # Cantilever with tip load P: w(L) = P L³/(3EI), θ(L) = P L²/(2EI) — cubic, so exact.
    L, EI, P = 1.3, 7.0, 2.5
    K = EI * fem.element_matrices(L)["stiffness"][2:, 2:]
    w, theta = np.linalg.solve(K, [P, 0.0])
    assert w == pytest.approx(P * L**3 / (3 * EI), rel=1e-14)
    assert theta == pytest.approx(P * L**2 / (2 * EI), rel=1e-14)


def test_relative_coordinates_map_and_its_adjoint():
    nodes = fem.graded_mesh(1.0, 7, 0.8)
    rng = np.random.default_rng(3)
    for pinned in (False, True):
        T = RelativeCoordinates(nodes, pinned)
        matrix = np.column_stack([T.apply(e) for e in np.eye(14)])
        f = rng.normal(size=16)
        np.testing.assert_allclose(T.adjoint(f), matrix.T @ f, rtol=1e-13, atol=1e-14)
        x = T.apply(rng.normal(size=14))
        assert x[0] == 0.0 and (x[1] == 0.0 or pinned)
        if pinned:
            assert abs(x[-2]) < 1e-14  # w(L) = 0


CANTILEVER = shapes.ClampedFree().betas(3) ** 2  # exact ω for L = EI = ρA = 1


def test_cantilever_frequencies_converge_from_above_at_rate_four():
    """Relative error of the first three cantilever frequencies, 1…64 elements:
    always positive (Rayleigh–Ritz), decreasing, fitted rate in [3.9, 4.1]
    (Hermite cubics: O(h⁴) eigenvalue error; fit over 8…64 elements, the
    asymptotic range of the third mode)."""
    counts = np.array([1, 2, 4, 8, 16, 32, 64])
    errors = np.full((counts.size, 3), np.nan)
    for i, count in enumerate(counts):
        omega = fem.beam_frequencies(1.0, 1.0, 1.0, count, n=min(3, 2 * count))
        errors[i, : omega.size] = omega / CANTILEVER[: omega.size] - 1
    valid = ~np.isnan(errors)
    assert np.all(errors[valid] > 0)
    for k in range(3):
        column = errors[:, k][valid[:, k]]
        assert np.all(np.diff(column) < 0)
        fit = counts >= 8
        rate = -np.polyfit(np.log(counts[fit]), np.log(errors[fit, k]), 1)[0]
        assert 3.9 <= rate <= 4.1, f"mode {k + 1}: rate {rate:.3f}"


@pytest.mark.parametrize(
    "bc, mu, j", [("clamped-mass", 1.0, 0.1), ("clamped-mass", 50.0, 2.0), ("pinned-pinned", 0, 0)]
)
def test_fine_meshes_reach_the_exact_roots(bc, mu, j):
    # Exact: clamped-mass roots of shapes (mpmath-checked) / kπ for pinned-pinned.
    exact = (shapes.ClampedMass(mu, j) if bc == "clamped-mass" else shapes.PinnedPinned()).betas(3) ** 2
    omega = fem.beam_frequencies(1.0, 1.0, 1.0, 2000, bc=bc, tip_mass=mu, tip_inertia=j, n=3)
    np.testing.assert_allclose(omega, exact, rtol=1e-11)


def test_well_conditioned_solver_keeps_digits_where_the_assembled_matrix_loses_them():
    """The reason for fem.eigen's formulation: at 2 000 elements the assembled
    stiffness (cond ~ 1e14) gives the lowest cantilever frequency to ~1e-5 with
    shift-invert Lanczos, the relative-coordinate solver to ~1e-15."""
    elements = 2000
    nodes = fem.uniform_mesh(1.0, elements)
    a = assemble(nodes)
    free = np.arange(2, 2 * elements + 2)
    K, M = a["stiffness"].tocsc()[free][:, free], a["mass"].tocsc()[free][:, free]
    naive = math.sqrt(scipy.sparse.linalg.eigsh(K, k=1, M=M, sigma=0.0, return_eigenvectors=False)[0])
    ours = fem.beam_frequencies(1.0, 1.0, 1.0, elements, n=1)[0]
    assert abs(ours / CANTILEVER[0] - 1) < 1e-13
    assert abs(naive / CANTILEVER[0] - 1) > 1e-9


def test_beam_frequencies_rejects_bad_input():
    with pytest.raises(ValueError, match="bc must be one of"):
        fem.beam_frequencies(1.0, 1.0, 1.0, 4, bc="free-free")
    with pytest.raises(ValueError, match=r"EI must be > 0, got -1.0"):
        fem.beam_frequencies(1.0, -1.0, 1.0, 4)
    with pytest.raises(ValueError, match="need bc='clamped-mass'"):
        fem.beam_frequencies(1.0, 1.0, 1.0, 4, tip_mass=1.0)
    with pytest.raises(ValueError, match=r"n must be an integer in \[1, 8\]"):
        fem.beam_frequencies(1.0, 1.0, 1.0, 4, n=9)
    with pytest.raises(ValueError, match="number of elements must be an integer >= 1, got 0"):
        fem.beam_frequencies(1.0, 1.0, 1.0, 0)


def test_element_basis_matches_the_assembled_model_and_exact_point_loads():
    # Lumped mass mid-element (no node there) is exact through the interpolation:
    # the engine model's locked frequencies equal those of the assembled matrices
    # with the point mass added through N(s).
    arm = Arm.planar([Link.flexible(1.0, 1.0, 1.0, lumped_masses=[LumpedMass(0.37, 0.5)])])
    model = fem.FiniteElementModel(arm, elements=4)
    basis = element_basis(fem.uniform_mesh(1.0, 4), "clamped")
    values, _ = basis.evaluate(np.array([0.37]))
    M = basis.dense("mass") + 0.5 * values @ values.T
    expected = np.sqrt(scipy.linalg.eigh(basis.dense("stiffness"), M, eigvals_only=True))
    # Round-off of two 8×8 generalized eigen-solves with cond(K) ≈ 1e5.
    np.testing.assert_allclose(model.natural_frequencies(), expected, rtol=1e-10)


def locked(model, joints):
    q = np.zeros(model.n_dof)
    q[: len(joints)] = joints
    return model.natural_frequencies(q, "locked")


def test_amm_and_fem_agree_on_the_three_link_space_arm():
    """Straight arm (θ = 0), first 5 locked frequencies: FEM refines towards
    AMM with distal-load shapes; the gap shrinks with elements."""
    arm = space_arm_3link()
    reference = locked(AssumedModesModel(arm, shape="clamped-mass", modes=6), [0, 0, 0])[:5]
    gaps = [
        np.max(np.abs(locked(fem.FiniteElementModel(arm, elements=e), [0, 0, 0])[:5] / reference - 1))
        for e in (2, 4, 8)
    ]
    assert gaps[0] > gaps[1] > gaps[2]
    assert gaps[2] < 1e-4


def test_amm_and_fem_agree_on_the_lumped_two_link_arm():
    arm = lumped_two_link(gravity=False)
    joints = [math.pi / 4, -math.pi / 4]
    reference = locked(AssumedModesModel(arm, shape="clamped-mass", modes=8, reference=joints), joints)[:2]
    gaps = [
        np.max(np.abs(locked(fem.FiniteElementModel(arm, elements=e), joints)[:2] / reference - 1))
        for e in (1, 2, 4, 8)
    ]
    assert all(a > b for a, b in itertools.pairwise(gaps))
    assert gaps[-1] < 1e-7


def test_joint_block_of_the_mass_matrix_is_identical_when_undeformed():
    """M_rr at δ = 0 needs only ∫ρA, ∫ρA s and the point masses, which both
    backends integrate exactly: AMM and FEM agree to round-off at any θ."""
    arm = Arm.planar(
        [
            Link.flexible(0.8, 1.0, 4.0, lumped_masses=[LumpedMass(0.3, 0.2, 0.01)]),
            Link.flexible(0.6, 0.6, 1.5),
        ],
        payload=Payload(0.3, 0.001),
    )
    a, b = AssumedModesModel(arm, modes=3), fem.FiniteElementModel(arm, elements=3)
    for theta in np.random.default_rng(5).uniform(-np.pi, np.pi, (5, 2)):
        qa, qb = np.zeros(a.n_dof), np.zeros(b.n_dof)
        qa[:2] = qb[:2] = theta
        np.testing.assert_allclose(a.mass_matrix(qa)[:2, :2], b.mass_matrix(qb)[:2, :2], rtol=1e-13)


def test_fem_model_options_are_validated():
    arm = Arm.planar([Link.flexible(1.0, 1.0, 1.0)])
    with pytest.raises(ValueError, match=r"frame\[1\]: must be one of"):
        fem.FiniteElementModel(arm, frame="hinged")
    with pytest.raises(ValueError, match=r"elements: links \[2\] are not flexible"):
        fem.FiniteElementModel(arm, elements={2: 4})
    with pytest.raises(ValueError, match="link 1: number of elements must be an integer >= 1, got 0"):
        fem.FiniteElementModel(arm, elements=0)
    model = fem.FiniteElementModel(arm, elements=3, frame="pinned")
    assert model.coordinates[:3] == ("theta1", "w1_1", "w1_2")
    # Pinned frame: the only root DOF left is the root slope θ₀ → B row 1 there.
    np.testing.assert_array_equal(
        model.input_matrix(None)[:, 0], np.eye(model.n_dof)[0] + np.eye(model.n_dof)[1]
    )


def test_engine_frequencies_of_fine_meshes_fall_at_rate_four_to_round_off():
    """The engine's FEM model of a cantilever with a 17.5 kg tip mass (one_flexible_link, joints
    locked) against the exact clamped-mass roots: modes 2 and 3 fall at rate 4 over 32…256
    elements (fitted 3.9993 and 4.0000) and reach ≤ 2e-12 at 1024 elements (measured 2.5e-13 and
    1.7e-12); mode 1, nearly the tip mass on the beam's spring, is at round-off from 32
    elements (measured ≤ 1.3e-13). Solved directly in nodal coordinates it stalled and grew
    (2.0e-7 at 128 elements): the assembled stiffness loses ~ε N⁴; the engine solves in
    element-deformation coordinates with the inverse pencil, and at 1024 elements, where
    λ_max/λ_min passes 1/ε, takes the top of the spectrum from the direct pencil (before that
    the unresolved top came out negative and was reported as an unstable mode).

    Solved with one BLAS thread, as every study case is (``[execution] blas_threads = 1``): at
    1024 elements the error is round-off, and its last digits follow the BLAS reduction order
    (measured on an AMD EPYC: mode 3 6.3e-13 with one thread, 2.7e-12 with two)."""
    from threadpoolctl import threadpool_limits

    from core.arm.presets import one_flexible_link
    from studies.references import exact_locked_frequencies

    arm = one_flexible_link()
    exact = exact_locked_frequencies(arm, 3)[0]
    counts = np.array([32, 64, 128, 256])
    with threadpool_limits(limits=1, user_api="blas"):
        errors = np.array(
            [
                fem.FiniteElementModel(arm, elements=int(e)).natural_frequencies()[:3] / exact - 1
                for e in counts
            ]
        )
        omega = fem.FiniteElementModel(arm, elements=1024).natural_frequencies()
    assert np.all(errors > -1e-15)  # Ritz: from above, to round-off
    assert np.all(np.abs(errors[:, 0]) < 2e-13)
    rates = -np.polyfit(np.log(counts), np.log(errors[:, 1:]), 1)[0]
    assert np.all(np.abs(rates - 4.0) < 0.1), rates
    assert np.all(np.diff(omega) > 0) and omega[0] > 0
    assert np.all(np.abs(omega[:3] / exact - 1) < 2e-12)


def test_lowest_first_joins_both_pencils_when_the_spectrum_is_wider_than_one_over_epsilon():
    """K = diag(10^k) in shuffled order, k = 0…18 (λ_max/λ_min = 1e18 > 1/ε), M = 1: the inverse
    pencil's μ for the top modes underflow its round-off, so the top comes from the direct
    pencil; every eigenvalue exact to 1e-15 relative, ascending, each with its own unit vector.
    (A dense rotated K would not do: forming it rounds away the small eigenvalues themselves.)"""
    from core.dynamics.model import _lowest_first

    order = np.random.default_rng(4).permutation(19)
    exact = 10.0 ** np.arange(19)
    values, vectors = _lowest_first(np.diag(exact[order]), np.eye(19))
    np.testing.assert_allclose(values, exact, rtol=1e-15)
    np.testing.assert_array_equal(np.argmax(np.abs(vectors), axis=0), np.argsort(order))


@pytest.mark.parametrize(
    ("joints", "gravity", "angles"),
    [
        ("locked", True, (0.6, -1.1)),  # K positive definite: no shift
        ("free", False, (0.6, -1.1)),  # two rigid-body modes: shifted
        ("free", True, (math.pi / 2, 0.0)),  # upright: unstable, a negative eigenvalue, shifted
    ],
)
def test_deformation_coordinates_give_the_direct_solve_on_small_models(joints, gravity, angles):
    """Where the direct solve is still accurate (4 elements per link), the engine's
    frequencies in deformation coordinates agree with eigh(K, M) in nodal
    coordinates to 1e-10 relative (measured ≤ 3e-13), with and without the shift."""
    model = fem.FiniteElementModel(lumped_two_link(gravity=gravity), elements=4, frame="pinned")
    q = model.home()
    q[:2] = angles
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # the upright arm is unstable, and says so
        ours = model.natural_frequencies(q, joints)
    M, K = model.mass_matrix(q), model.elastic_stiffness(q) + model.gravity_stiffness(q)
    if joints == "locked":
        B = model.input_matrix(q)
        N = np.vstack([-B[model.flex].T, np.eye(model.n_dof - model.n_joints)])
        M, K = N.T @ M @ N, N.T @ K @ N
    direct = scipy.linalg.eigh(0.5 * (K + K.T), M, eigvals_only=True)
    if joints == "free" and not gravity:
        direct[:2] = 0.0  # the rigid-body modes, reported as 0
    direct = np.sign(direct) * np.sqrt(np.abs(direct))
    np.testing.assert_allclose(ours, direct, rtol=1e-10, atol=1e-10 * np.max(np.abs(direct)))
    assert (ours[0] < 0) == (gravity and joints == "free")
