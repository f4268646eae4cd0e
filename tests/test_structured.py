"""The structured eigen-solve of :mod:`core.dynamics.structured` and the structured forward
dynamics of :mod:`core.dynamics.structured_forward`.

References
----------
* The dense path of the same model (``method="dense"``): M and ∂G/∂q formed whole, the
  pencil solved by ``eigh`` — an independent implementation of the same numbers.
* Exact clamped–mass roots of the one-link arm's beam with its tip mass
  (:func:`studies.references.exact_locked_frequencies`, Wittrick–Williams and Brent).
* Cubic Hermite elements converge at rate 4 in the element size for frequencies
  (Strang & Fix, *An Analysis of the Finite Element Method*, 1973, §6.3: eigenvalue error
  O(h^{2(k+1−m)}) with k = 3, m = 2).
"""

from __future__ import annotations

import dataclasses
import tracemalloc
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import fem
from core import PD, Damping, ParabolicBlend, simulate
from core.arm.presets import lumped_two_link, one_flexible_link
from core.dynamics.basis import dense
from core.dynamics.structured import ChainStructure, NotStable
from core.dynamics.structured_forward import structured_dynamics
from fem import FiniteElementModel
from fem.assembly import assemble, constrained_dofs, element_basis
from fem.deformation import RelativeCoordinates
from studies.references import exact_locked_frequencies
from tests.strategies import models, states

BACKENDS = pytest.mark.parametrize("backend", ["amm", "fem"])


@BACKENDS
@given(data=st.data())
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_mass_and_gravity_stiffness_are_block_diagonal_plus_low_rank(backend, data):
    """M = BD + W C Wᵀ and ∂G/∂q = W G Wᵀ with C, G from the reduced chain equal the dense
    matrices of the engine at drawn arms and states (deflected ones too): 1e-12 of max|M|
    and of the gravity-stiffness scale, the larger of max|∂G/∂q| and |g|·(arm mass)·(arm
    reach) (measured ≤ 3.4e-15 and 2.1e-15 over 1400 draws; the reduction is exact, only
    round-off separates them). The physical scale matters where ∂G/∂q vanishes (a straight
    arm across gravity: entries of 1e-20 that are round-off of terms of size m g L)."""
    model = data.draw(models(backend, max_modes=4))
    assume(not model.translating)
    q, _ = data.draw(states(model))
    structure = ChainStructure(model, q)
    M = model.mass_matrix(q)
    assert np.max(np.abs(structure.mass_matrix() - M)) <= 1e-12 * np.max(np.abs(M))
    G = model.gravity_stiffness(q)
    low_rank = structure.W @ structure.G @ structure.W.T
    arm = model.arm
    mass = sum(
        link.mass if link.mass is not None else link.mass_per_length * link.length for link in arm.links
    )
    mass += arm.payload.mass if arm.payload is not None else 0.0
    reach = sum(link.length for link in arm.links)
    scale = max(np.max(np.abs(G)), np.linalg.norm(arm.gravity) * mass * reach)
    assert np.max(np.abs(low_rank - G)) <= 1e-12 * scale


@pytest.mark.parametrize("frame", ["clamped", "pinned"])
@pytest.mark.parametrize("size", [1.6e-13, 1e-300])
def test_a_tiny_deflection_stays_in_the_reduced_span(frame, size):
    """A deflection many orders below the coupling functionals (hypothesis found 1.6e-13 in one
    coordinate of a pinned 4-element link) is a direction of q all the same: the structure is
    built and M = BD + W C Wᵀ holds (1e-12 of max|M|, as above); the unscaled rank cut had
    dropped it ("the configuration is not in the span of the reduced chain")."""
    model = FiniteElementModel(lumped_two_link(), elements=4, frame=frame)
    q = np.zeros(model.n_dof)
    q[:2] = 0.3, -0.4
    q[model.n_joints + 1] = size
    structure = ChainStructure(model, q)
    M = model.mass_matrix(q)
    assert np.max(np.abs(structure.mass_matrix() - M)) <= 1e-12 * np.max(np.abs(M))


def _pencil_condition(model, q, count: int) -> np.ndarray:
    """Condition numbers κ_i of the lowest ``count`` eigenvalues λ_i of the locked pencil
    (K, M) the dense path forms: a relative perturbation ε of the data moves λ_i by at most
    ε κ_i to first order, κ_i = (‖K‖₂ + λ_i ‖M‖₂) ‖x_i‖² / (λ_i x_iᵀ M x_i) (Higham & Higham,
    "Structured backward error and condition of generalized eigenvalue problems", SIAM J.
    Matrix Anal. Appl. 20(2), 1998, eq. 3.4 for a definite pencil)."""
    import scipy.linalg

    M = model.mass_matrix(q)
    transform = model.elastic_coordinates(q)
    Z, K = (np.eye(model.n_dof), model.elastic_stiffness(q)) if transform is None else transform
    N = np.vstack([-model.input_matrix(q)[model.flex].T, np.eye(model.n_dof - model.n_joints)])
    W = N @ Z[model.flex, model.flex]
    K = N.T @ K @ N if transform is None else K[model.flex, model.flex]
    M, K = W.T @ M @ W, K + W.T @ model.gravity_stiffness(q) @ W
    M, K = 0.5 * (M + M.T), 0.5 * (K + K.T)
    lam, X = scipy.linalg.eigh(K, M)
    lam, X = lam[:count], X[:, :count]
    norms = np.linalg.norm(K, 2) + lam * np.linalg.norm(M, 2)
    return norms * np.einsum("ik,ik->k", X, X) / (lam * np.einsum("ik,ij,jk->k", X, M, X))


@BACKENDS
@given(data=st.data())
@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_structured_and_dense_frequencies_agree(backend, data):
    """The lowest frequencies (joints locked, undeflected, drawn joint angles) and their
    modes by the structured Lanczos path equal the dense path's: frequencies to 1e-12
    relative wherever the data determine them that well, i.e. to max(1e-12, ε κ_i) with κ_i
    the condition number of λ_i (:func:`_pencil_condition`; ω = √λ moves by half of it).
    Both paths refine the eigenvalues of the upper part of their spectrum by Rayleigh
    quotients (the inverse pencil alone resolves λ only to ε λ/λ_min: before that, 1.3e-11
    apart at worst in 2000 draws). Measured over 1985 drawn arms: ≤ 0.14 of the bound and
    ≤ 1.4e-12 relative (3 draws above 1e-12; the worst kind: a 12-coordinate FEM arm whose
    4th mode has ε κ = 2.3e-11 — the dense path, the structured path and SciPy's direct
    ``eigh(K, M)`` lie 1.9e-12, 1.9e-12 and 2.4e-12 off a 40-digit mpmath solve of the same
    pencil: the data, not a path, limit the agreement there). Modes to 1e-6 of the largest entry (unit modal mass,
    frequencies separated by 1e-6 at least, where ε/gap bounds a mode's error; measured
    ≤ 4.8e-12). An unstable configuration must raise NotStable in the structured path and
    is skipped."""
    model = data.draw(models(backend, max_modes=4))
    assume(not model.translating and model.n_dof > model.n_joints)
    q, _ = data.draw(states(model, flex_scale=0.0))
    count = min(4, model.n_dof - model.n_joints)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        dense, dense_modes = model.natural_frequencies(q, vectors=True, count=count, method="dense")
    if np.any(dense <= 0):
        with pytest.raises(NotStable):
            model.natural_frequencies(q, count=count, method="structured")
        return
    omega, modes = model.natural_frequencies(q, vectors=True, count=count, method="structured")
    bound = np.maximum(1e-12, np.finfo(float).eps * _pencil_condition(model, q, count))
    assert np.all(np.abs(omega - dense) <= bound * dense)
    separated = np.all(np.diff(dense) > 1e-6 * dense[1:]) if count > 1 else True
    if separated:  # repeated frequencies have no unique modes
        assert np.max(np.abs(modes - dense_modes)) <= 1e-6 * np.max(np.abs(dense_modes))


def test_free_joints_without_gravity_have_rigid_modes_and_with_gravity_hang():
    """Free joints: without gravity the n_joints rigid-body modes are reported as 0 and the
    elastic ones equal the dense path's (1e-10; measured 2e-15); hanging under gravity
    (lumped two-link at θ = (−90°, 0), a stable equilibrium) every frequency equals the
    dense one (1e-10; measured 2.5e-14); upright (θ₁ = 90°) the configuration is unstable:
    the structured path raises NotStable, ``"auto"`` falls back to the dense path, which
    reports negative frequencies with a warning."""
    model = FiniteElementModel(one_flexible_link(), elements=40, frame="pinned")
    q = model.home()
    omega = model.natural_frequencies(q, "free", count=5, method="structured")
    assert omega[0] == 0.0
    np.testing.assert_allclose(
        omega[1:], model.natural_frequencies(q, "free", method="dense")[1:5], rtol=1e-10
    )
    model = FiniteElementModel(lumped_two_link(), elements=20, frame="pinned")
    q = model.home()
    q[:2] = [-np.pi / 2, 0.0]
    hanging = model.natural_frequencies(q, "free", count=6, method="structured")
    np.testing.assert_allclose(hanging, model.natural_frequencies(q, "free", method="dense")[:6], rtol=1e-10)
    q[:2] = [np.pi / 2, 0.0]
    with pytest.raises(NotStable):
        model.natural_frequencies(q, "free", count=6, method="structured")
    with pytest.warns(RuntimeWarning, match="not stable"):
        upright = model.natural_frequencies(q, "free", count=6)
    assert upright[0] < 0


@pytest.mark.parametrize("elements", [512, 1024, 4096])
def test_fine_meshes_keep_the_exact_tip_mass_frequency(elements):
    """One flexible link with its 17.5 kg tip mass, joints locked: ω₁ of the mesh within
    1e-10 of the exact clamped–mass root (measured 3e-15, 0 and 7e-16 at 512, 1024 and 4096
    elements; the dense pencil loses ε·cond digits there, the element-deformation
    coordinates do not). 4096 elements: build and solve about 0.1 s, 10 MiB (the bases
    are structured: no (2E)² array, see the next test)."""
    arm = one_flexible_link()
    exact = exact_locked_frequencies(arm, 1)[0][0]
    model = FiniteElementModel(arm, elements=elements)
    omega = model.natural_frequencies(model.home(), count=3)
    assert abs(omega[0] / exact - 1) <= 1e-10


@pytest.mark.slow
def test_two_link_frequencies_converge_at_rate_four_up_to_512_elements():
    """The lumped two-link arm under gravity at θ = (45°, −45°), joints locked: the error of
    ω₂ … ω₄ against the 512-element mesh falls as E⁻⁴ (fitted rate 4 ± 0.1 over E = 8 … 64,
    where the reference's own error, ~(64/512)⁴ = 2.4e-4 of theirs, does not bend the fit;
    measured 3.99–4.00), and no error grows with refinement."""
    arm = lumped_two_link()
    q = None
    meshes = [8, 16, 32, 64]
    values = {}
    for elements in [*meshes, 512]:
        model = FiniteElementModel(arm, elements=elements)
        q = model.home()
        q[:2] = [np.pi / 4, -np.pi / 4]
        values[elements] = model.natural_frequencies(q, count=4)
    errors = np.array([np.abs(values[e] / values[512] - 1) for e in meshes])  # (meshes, modes)
    for mode in range(1, 4):
        rate = -np.polyfit(np.log(meshes), np.log(errors[:, mode]), 1)[0]
        assert rate == pytest.approx(4.0, abs=0.1)
        assert np.all(np.diff(errors[:, mode]) < 0)


def test_building_a_fine_mesh_and_its_lowest_frequencies_allocate_no_dense_block():
    """FiniteElementModel(one_flexible_link(), elements=4096) and natural_frequencies(count=10):
    the peak of Python allocations (tracemalloc, which sees NumPy's buffers) stays below
    1/16 of ONE dense (2E)² float array, 8·(2E)² = 512 MiB → bound 32 MiB (measured 10 MiB:
    O(E) — the sparse blocks, the deformation operator, the thin interface basis W and the
    Lanczos vectors). The dense data of the dynamics (K, D, the bodies' m × m blocks, the
    compiled chain) is still unbuilt afterwards: it is made on first use only."""
    arm = one_flexible_link()
    FiniteElementModel(arm, elements=8).natural_frequencies(count=3, method="structured")  # imports
    elements = 4096
    tracemalloc.start()
    try:
        model = FiniteElementModel(arm, elements=elements)
        model.natural_frequencies(model.home(), count=10)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    dense_block = 8 * (2 * elements) ** 2
    assert peak < dense_block / 16, f"peak {peak / 2**20:.1f} MiB"
    assert model._compiled_chain is None and "_K" not in vars(model) and "_D" not in vars(model)
    body = model.bodies[1]
    assert not {"N", "M_δδ", "E", "rotary_δδ"} & set(vars(body))
    # Asked for, the dense data is there (and correct: the other tests compare it).
    assert model.stiffness_matrix(model.home()).shape == (model.n_dof, model.n_dof)


@pytest.mark.parametrize("bc", ["clamped", "pinned"])
def test_structured_basis_forms_equal_their_dense_counterparts(bc):
    """element_basis on a small graded mesh: the sparse mass and stiffness equal the assembled
    dense blocks restricted to the free DOFs and symmetrized (exactly: the same sums); the
    deformation operator's T @ 1 equals the dense T built column by column from
    ``RelativeCoordinates.apply`` (exactly), and T z, Tᵀ f, T Z, Tᵀ F equal the dense
    products to 1e-15 of their scale (running sums against BLAS: round-off only); the
    block-diagonal deformation stiffness equals the 2×2 element blocks (1e-15: h³ by another
    power routine), and
    Tᵀ K T = K_z to 1e-10 relative (cond ≈ 1e6 at h = 0.05; measured ~1e-12)."""
    nodes = fem.graded_mesh(1.3, 9, 1.4)
    elements = nodes.size - 1
    basis = element_basis(nodes, bc)
    assert basis.structured
    free = np.setdiff1d(np.arange(2 * nodes.size), constrained_dofs(elements, bc))
    assembled = assemble(nodes)
    for name in ("mass", "stiffness"):
        block = assembled[name].toarray()[np.ix_(free, free)]
        assert np.array_equal(basis.dense(name), 0.5 * (block + block.T))
        assert np.array_equal(dense(getattr(basis, name)), basis.dense(name))
    relative = RelativeCoordinates(nodes, pinned=bc == "pinned")
    T = np.column_stack([relative.apply(e)[free] for e in np.eye(2 * elements)])
    assert np.array_equal(basis.dense("deformations"), T)
    rng = np.random.default_rng(7)
    z, f = rng.normal(size=2 * elements), rng.normal(size=free.size)
    Z, F = rng.normal(size=(2 * elements, 3)), rng.normal(size=(free.size, 3))
    operator = basis.deformations
    for got, expected in (
        (operator @ z, T @ z),
        (operator.T @ f, T.T @ f),
        (operator @ Z, T @ Z),
        (operator.T @ F, T.T @ F),
    ):
        scale = np.max(np.abs(T)) * np.max(np.abs(np.concatenate([z, f, Z.ravel(), F.ravel()]))) * T.shape[0]
        assert np.max(np.abs(got - expected)) <= 1e-15 * scale
    h = np.diff(nodes)
    K_z = basis.dense("deformation_stiffness")
    for e in range(elements):
        block = [[12 / h[e] ** 3, -6 / h[e] ** 2], [-6 / h[e] ** 2, 4 / h[e]]]
        np.testing.assert_allclose(K_z[2 * e : 2 * e + 2, 2 * e : 2 * e + 2], block, rtol=1e-15)
    assert np.count_nonzero(K_z) == 4 * elements
    K = basis.dense("stiffness")
    assert np.max(np.abs(T.T @ K @ T - K_z)) <= 1e-10 * np.max(np.abs(K_z))


# -- forward dynamics (solver="structured") -------------------------------------------------


@st.composite
def dissipative_models(draw, backend: str):
    """A drawn model of :func:`tests.strategies.models` with what that strategy leaves out
    drawn on top: link damping (none, Rayleigh or modal), viscous and Coulomb joint friction,
    and the tip rotation (slope or chord)."""
    model = draw(models(backend, max_modes=4))
    links = []
    for link in model.arm.links:
        if link.is_flexible:
            kind = draw(st.sampled_from(["none", "rayleigh", "modal"]))
            if kind == "rayleigh":
                link = dataclasses.replace(
                    link, damping=Damping.rayleigh(draw(st.floats(0.0, 5.0)), draw(st.floats(0.0, 1e-3)))
                )
            elif kind == "modal":
                link = dataclasses.replace(link, damping=Damping.modal(draw(st.floats(0.0, 0.1))))
        links.append(link)
    joints = [
        dataclasses.replace(
            joint,
            viscous_friction=draw(st.floats(0.0, 0.1)),
            coulomb_friction=draw(st.floats(0.0, 0.1)),
        )
        for joint in model.arm.joints
    ]
    arm = dataclasses.replace(
        model.arm,
        links=tuple(links),
        joints=tuple(joints),
        tip_rotation=draw(st.sampled_from(["slope", "chord"])),
    )
    return model.rebuild(arm)


@BACKENDS
@given(data=st.data())
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_structured_forward_dynamics_solves_the_dense_equations(backend, data):
    """``forward_dynamics(solver="structured")`` against the dense engine (M, h + G, B, D, K
    formed whole; ``"composite"`` Cholesky) on drawn arms of both backends: pinned and
    clamped frames, lumped masses, payloads, gravity, motor and hub inertia (the arm
    strategy), damping, viscous and Coulomb friction, slope and chord tips (drawn here),
    deflected and moving (δ, δ̇ ≠ 0).

    * Backward error: the structured q̈ solves the dense equations M q̈ + h + G = Q to
      1e-14 of S = ‖M‖(‖q̈‖ + |q̇|²) + ‖Q‖ + ‖h + G‖ (2-norms; ‖M‖|q̇|² the size of the
      velocity products on links of about 1 m, which keeps S away from zero where every
      force cancels to round-off). Measured ≤ 8.5e-16 in three runs of 2000 draws (the dense
      path's own residual ≤ 2.1e-16): the solver is backward stable, its error round-off.
      (With one refinement step only, one draw in ~10 000 — a clamped–mass AMM link at
      rest — stayed at 3.1e-13; the second step takes it to 8.6e-17.)
    * Forward error: ‖q̈ − q̈_composite‖ ≤ 1e-14 ‖M⁻¹‖ S, the bound that backward errors of
      that size imply (measured ≤ 4.8e-16 ‖M⁻¹‖ S). Relative to max|q̈| the two paths
      agree to median 1.2e-14, 99th percentile ≤ 6.9e-11, worst 3.1e-9 (at cond(M) = 5e7):
      a fixed 1e-12 of max|q̈| fails on 6–8 % of the draws — ill-conditioned M, or q̈ far
      below the forces' scale (forces that cancel) — and is not asserted; the next test
      shows which path is closer to the exact solution there.
    * Applied forces B(τ + τ_c) − D q̇ − K q link by link (banded K, Rayleigh as banded plus
      the lumped masses' rank, modal by the link block) equal the dense ones to 1e-14 of
      their terms' size (measured ≤ 3.1e-16), and the right-hand side of
      ``rates_function("structured")`` holds the same q̈ and the dense dissipated power
      q̇ᵀDq̇ − uᵀτ_c (1e-14 of |q̇|ᵀ|D||q̇| + |u||τ_c|; measured ≤ 4.5e-16).
    """
    model = data.draw(dissipative_models(backend))
    assume(not model.translating)
    q, qd = data.draw(states(model))
    tau = data.draw(hnp.arrays(float, model.n_joints, elements=st.floats(-5.0, 5.0)))
    qdd = model.forward_dynamics(q, qd, tau, solver="structured")
    composite = model.forward_dynamics(q, qd, tau)
    M = model.mass_matrix(q)
    B, D, K = model.input_matrix(q), model.damping_matrix(q), model.stiffness_matrix(q)
    coulomb = model.friction_forces(q, qd)
    applied = B @ (tau + coulomb) - D @ qd - K @ q
    forces = model.nonlinear_forces(q, qd)
    norm = np.linalg.norm
    size = norm(M, 2)
    scale = size * (norm(qdd) + qd @ qd) + norm(applied) + norm(forces)
    assert norm(M @ qdd + forces - applied) <= 1e-14 * scale
    assert norm(qdd - composite) <= 1e-14 * norm(np.linalg.inv(M), 2) * scale
    structured = structured_dynamics(model)
    got, damping, _ = structured.applied(q, qd, tau)
    terms = norm(B @ (tau + coulomb)) + norm(np.abs(D) @ np.abs(qd)) + norm(np.abs(K) @ np.abs(q))
    assert norm(got - applied) <= 1e-14 * terms
    n = model.n_dof
    rates = model.rates_function("structured")(np.concatenate([q, qd, [0.0, 0.0]]), tau)
    u = B.T @ qd
    assert np.array_equal(rates[:n], qd) and np.array_equal(rates[n : 2 * n], qdd)
    assert rates[-2] == pytest.approx(u @ tau, rel=1e-14, abs=1e-300)
    dissipated = qd @ D @ qd - u @ coulomb
    assert abs(rates[-1] - dissipated) <= 1e-14 * (
        np.abs(qd) @ np.abs(D) @ np.abs(qd) + np.abs(u) @ np.abs(coulomb)
    )
    assert norm(damping - D @ qd) <= 1e-14 * norm(np.abs(D) @ np.abs(qd))


@BACKENDS
@given(data=st.data())
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_velocity_and_gravity_forces_are_the_reduced_chains(backend, data):
    """The claim the structured dynamics rests on (module docstring): with U spanning the
    fixed functionals and δ, ∫φφᵀδ, δ̇, ∫φφᵀδ̇ of every plane, q = W Wᵀq, q̇ = W Wᵀq̇,
    h(q, q̇) = W h̃(Wᵀq, Wᵀq̇) and G(q) = W G̃(Wᵀq) with h̃, G̃ the engine's on the reduced
    chain (the compiled kernels) — checked against the oracle on the full chain
    (``compiled=False``: M, G from one pass, h from the Christoffel symbols) at drawn arms and states with
    δ, δ̇ ≠ 0. The reduction is exact, so only round-off separates them: q and q̇ to
    1e-14 of their largest entry (plus the smallest normal number: subnormal entries carry
    fewer digits; measured ≤ 3.1e-15 in two runs of 2000 draws), h to 1e-12 of
    ‖h‖ + ‖M‖|q̇|² (the size of velocity products on links of about 1 m; measured ≤ 8.1e-15)
    and G to 1e-12 of ‖G‖ + |g|·(arm mass)·(reach) (measured ≤ 1.0e-14). For scale, the
    compiled and the numpy engine on the full chain differ by up to 5.8e-15 and 1.2e-15 of
    the same. Without ∫φφᵀδ̇ in U the claim fails on links bending in two planes (the term
    Ω_x δ_yᵀNδ̇_z: 2 % of h on the azimuth–elevation arm, 30 elements)."""
    model = data.draw(models(backend, max_modes=4))
    assume(not model.translating)
    q, qd = data.draw(states(model))
    twin = model.replace(compiled=False)
    reduced = structured_dynamics(model).reduce(q, qd)
    for x, small in ((q, reduced.q), (qd, reduced.qd)):
        error = np.max(np.abs(reduced.lift(small) - x))
        assert error <= 1e-14 * np.max(np.abs(x)) + np.finfo(float).tiny
    norm = np.linalg.norm
    dense = twin.bias_forces(q, qd)
    h = reduced.lift(reduced.chain.bias_forces(reduced.q, reduced.qd))
    assert norm(h - dense) <= 1e-12 * (norm(dense) + norm(twin.mass_matrix(q), 2) * (qd @ qd))
    dense = twin.gravity_forces(q)
    G = reduced.lift(reduced.chain.gravity_forces(reduced.q))
    arm = model.arm
    mass = sum(
        link.mass if link.mass is not None else link.mass_per_length * link.length for link in arm.links
    )
    mass += arm.payload.mass if arm.payload is not None else 0.0
    reach = sum(link.length for link in arm.links)
    assert norm(G - dense) <= 1e-12 * (norm(dense) + norm(arm.gravity) * mass * reach)


def test_structured_accelerations_are_as_close_to_the_exact_solution_as_the_problem_allows():
    """The lumped two-link arm, 64 elements per link (κ(M) = 2.9e11: slope coordinates of
    mass ~ρh³ beside a 2.94 kg hub), θ = (0.5, −0.7), θ̇ = (1, −2), τ = (0.3, −0.2). The
    reference is the exact solution of the dense equations as the engine forms them (M,
    h + G, Q in double), by iterative refinement with residuals in 60-digit mpmath.
    Perturbing that data by one ε per entry moves the exact q̈ by up to 4.5e-8 of max|q̈|
    (measured over three draws): the problem's own sensitivity, bounded to first order by
    Skeel's componentwise condition ε·| |M⁻¹|(|M||q̈| + |rhs|) |∞ (4.6e-7 of max|q̈| here).
    The structured q̈ (which forms M and h + G its own way, so its data differ from the
    reference's by a few ε per entry) must be within that bound: as accurate as a
    componentwise backward-stable solve of the data can be. Measured 1.9e-8 on one machine,
    6.5e-8 on an AMD EPYC (its BLAS rounds the data differently); the dense Cholesky of M,
    for comparison, 1.4e-7 (not asserted)."""
    import mpmath
    import scipy.linalg

    model = FiniteElementModel(lumped_two_link(), elements=64)
    q, qd = model.home(), np.zeros(model.n_dof)
    q[:2], qd[:2] = (0.5, -0.7), (1.0, -2.0)
    tau = np.array([0.3, -0.2])
    qdd = model.forward_dynamics(q, qd, tau, solver="structured")
    M = model.mass_matrix(q)
    applied = model.input_matrix(q) @ (tau + model.friction_forces(q, qd)) - model.elastic_forces(q)
    rhs = applied - model.damping_matrix(q) @ qd - model.nonlinear_forces(q, qd)
    scale = 1.0 / np.sqrt(np.diag(M))
    factor = scipy.linalg.lu_factor(M * scale[:, None] * scale)
    with mpmath.workdps(60):
        exact = [mpmath.mpf(v) for v in qdd]
        rows = [[(j, mpmath.mpf(M[i, j])) for j in np.flatnonzero(M[i])] for i in range(model.n_dof)]
        for _ in range(8):
            residual = np.array(
                [
                    float(mpmath.mpf(rhs[i]) - mpmath.fsum(m * exact[j] for j, m in row))
                    for i, row in enumerate(rows)
                ]
            )
            step = scale * scipy.linalg.lu_solve(factor, scale * residual)
            exact = [x + mpmath.mpf(s) for x, s in zip(exact, step, strict=True)]
        reference = np.array([float(x) for x in exact])
    assert np.max(np.abs(step)) <= 1e-25 * np.max(np.abs(reference))  # converged
    skeel = np.finfo(float).eps * np.abs(np.linalg.inv(M)) @ (np.abs(M) @ np.abs(reference) + np.abs(rhs))
    assert np.max(np.abs(qdd - reference)) <= np.max(skeel)


def test_simulation_with_the_structured_solver_equals_composite():
    """``simulate(..., solver="structured")`` of the lumped two-link arm (FEM, 2 elements per
    link, gravity, viscous and Coulomb joint friction, PD tracking a blend; Radau) follows
    the composite history: the integrators see the same right-hand sides up to round-off
    (previous tests), so the states agree to the integration tolerance (rtol 1e-8, atol
    1e-10: tolerance 1e-8 on q and q̇, measured 4.8e-11) and so do the work integrals of
    the input and of the dissipation (1e-8 relative, measured 2e-12). 10 ms of motion,
    ~4700 right-hand sides (the structured path's fixed cost, a reduced chain per call, is
    for fine meshes; on two elements the compiled composite one is faster)."""
    model = FiniteElementModel(lumped_two_link(), elements=2)
    q0 = model.home()
    q0[:2] = 0.3, -0.5
    common = dict(
        controller=PD(kp=20.0, kd=4.0),
        trajectory=ParabolicBlend((0.3, -0.5), (0.5, -0.2), 0.1, 0.05),
        t_eval=np.linspace(0, 0.01, 3),
        rtol=1e-8,
        atol=1e-10,
    )
    composite = simulate(model, (0, 0.01), q0, **common)
    structured = simulate(model, (0, 0.01), q0, solver="structured", **common)
    names = list(model.coordinates)
    rates = [f"{name}_dot" for name in names]
    np.testing.assert_allclose(structured[names + rates], composite[names + rates], rtol=0, atol=1e-8)
    for column in ("work_input", "work_dissipated"):
        assert composite[column].abs().max() > 0
        np.testing.assert_allclose(structured[column], composite[column], rtol=1e-8, atol=0)


def test_structured_solver_refuses_what_it_cannot_handle():
    """Translating links, geometric stiffening and models off the shared engine raise a
    ValueError naming the feature — from forward_dynamics, rates_function and simulate
    alike (no silent fallback to a dense solver)."""
    from amm.symbolic import derive
    from core.arm.presets import rigid_two_link, rrp_translating

    translating = FiniteElementModel(rrp_translating(), elements=2)
    stiffening = FiniteElementModel(one_flexible_link(), elements=4, geometric_stiffening=True)
    for model, feature in ((translating, "translating links"), (stiffening, "geometric stiffening")):
        q, qd, tau = model.home(), np.zeros(model.n_dof), np.zeros(model.n_joints)
        with pytest.raises(ValueError, match=feature):
            model.forward_dynamics(q, qd, tau, solver="structured")
        with pytest.raises(ValueError, match=feature):
            model.rates_function("structured")
        with pytest.raises(ValueError, match=feature):
            simulate(model, (0.0, 0.01), q, solver="structured")
    symbolic = derive(rigid_two_link()).to_numeric()
    with pytest.raises(ValueError, match="needs a ChainModel"):
        symbolic.forward_dynamics(np.zeros(2), np.zeros(2), np.zeros(2), solver="structured")


def test_fine_mesh_forward_dynamics_allocates_no_dense_block():
    """Two links × 4096 elements (n_dof 16 386; one dense n_dof² array is 2 GiB): the first
    structured ``forward_dynamics`` (building the cached factors) and a second one keep the
    peak of Python allocations (tracemalloc, which sees NumPy's buffers) below 1/64 of that
    dense array, 32 MiB (measured 8.0 MiB, 0.14 s for both calls: the sparse blocks, the
    banded factors and a few thin n_dof × r arrays), and leave the dense data unbuilt: K, D,
    the compiled chain and the bodies' m × m blocks."""
    arm = lumped_two_link()
    small = FiniteElementModel(arm, elements=8)  # the imports, outside the traced calls
    small.forward_dynamics(small.home(), np.zeros(small.n_dof), np.zeros(2), solver="structured")
    model = FiniteElementModel(arm, elements=4096)
    rng = np.random.default_rng(3)
    q = model.home()
    q[:2] = 0.4, -0.3
    qd = rng.normal(scale=1e-3, size=model.n_dof)
    q[2:] = rng.normal(scale=1e-6, size=model.n_dof - 2)
    tracemalloc.start()
    try:
        for _ in range(2):
            qdd = model.forward_dynamics(q, qd, np.array([0.1, -0.1]), solver="structured")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert np.all(np.isfinite(qdd))
    assert peak < 8 * model.n_dof**2 / 64, f"peak {peak / 2**20:.1f} MiB"
    assert model._compiled_chain is None and "_K" not in vars(model) and "_D" not in vars(model)
    for body in model.bodies.values():
        assert not {"N", "M_δδ", "E", "rotary_δδ"} & set(vars(body))
