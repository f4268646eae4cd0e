"""The structured eigen-solve of :mod:`core.structured` (issue 14).

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

import tracemalloc
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import fem
from core.basis import dense
from core.presets import lumped_two_link, one_flexible_link
from core.structured import ChainStructure, NotStable
from fem import FiniteElementModel
from fem.assembly import assemble, constrained_dofs, element_basis
from fem.eigen import _RelativeCoordinates
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


@BACKENDS
@given(data=st.data())
@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_structured_and_dense_frequencies_agree(backend, data):
    """The lowest frequencies (joints locked, undeflected, drawn joint angles) and their
    modes by the structured Lanczos path equal the dense path's: frequencies to 1e-9
    relative (measured ≤ 5.7e-11 and ≤ 3.0e-12 in runs of 300 and 800 drawn arms; on the
    worst arm of the second run both paths are within 1.5e-13 of a 40-digit mpmath solve of
    the same pencil), mode shapes to 1e-6 of the largest entry (unit modal mass, frequencies
    separated by 1e-6 at least, where ε/gap bounds a mode's error; measured ≤ 4.8e-12). An
    unstable configuration must raise NotStable in the structured path and is skipped."""
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
    np.testing.assert_allclose(omega, dense, rtol=1e-9)
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
    ``_RelativeCoordinates.apply`` (exactly), and T z, Tᵀ f, T Z, Tᵀ F equal the dense
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
    relative = _RelativeCoordinates(nodes, pinned=bc == "pinned")
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
