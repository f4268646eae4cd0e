"""Shape functions of clamped beams with a tip load: coefficients and evaluation.

The functions behind the clamped families of :mod:`shapes.clamped` and the
length-following shapes of :mod:`shapes.following`, real and complex.

Numerically stable evaluation
-----------------------------
The textbook form φ = cosh βη − cos βη − σ(sinh βη − sin βη) subtracts numbers
of size e^β that agree to ~β/ln 10 digits, so it loses everything beyond about
the twelfth mode. We use the equivalent basis of bounded functions

    φ(η) = A cos βξ + B sin βξ + C e^{−βξ} + D e^{−βη},   ξ = 1 − η,

(E = e^{−β}). Both tip conditions are satisfied by construction: the tip data
P_m = φ^(m)(1)/β^m are parametrized as P0 = X/(1+μβ), P3 = −μβ X/(1+μβ),
P1 = Y/(1+jβ³), P2 = jβ³ Y/(1+jβ³), which fix A, B and C; D comes from the
clamp conditions, and the remaining clamp condition (the only place the root
error enters, unamplified) fixes X:Y. Every quantity is O(1), so all modes
keep full precision even when a large tip load makes the tip nearly clamped.

Normalization and sign
----------------------
⟨φ_i, φ_j⟩ = ∫₀¹ φ_i φ_j dη + μ φ_i(1) φ_j(1) + j φ_i'(1) φ_j'(1) = δ_ij (for
clamped–free μ = j = 0), with ∫ φ² evaluated in closed form on the basis
above. Sign convention: the tip deflection φ_k(1) is positive.

Complex arguments
-----------------
The construction is analytic in (β, μ, j), and :func:`clamped_coefficients`,
:func:`clamped_evaluate` and :func:`basis_gram` (so also ``_coefficients_for`` and
``_evaluate`` of the families) accept complex arrays: dtypes propagate, the
discrete choices (which root condition fixes the mode, the scale before the
square root of the norm, the sign) are taken on real parts or passed in, and
no step cancels in the imaginary part (:func:`clamped_evaluate` forms cos, sin
and exp of complex arguments from real functions of the real and imaginary
parts), so that a complex step β + ih, h = 1e-30, gives ∂/∂β in the imaginary
part (tested). :mod:`shapes.following` differentiates the shapes with respect
to the free length this way, on a Cauchy contour. Real arguments give the
same results, bit for bit, as before.
"""

from __future__ import annotations

import numpy as np

#: A mode's X:Y comes from the consistency row when its norm is at least this fraction of the clamp row's.
PICK_RATIO = 0.1


def basis_gram(beta: np.ndarray) -> np.ndarray:
    """Closed-form ∫₀¹ u_p u_q dη for u = (cos βη, sin βη, e^{−βη}, e^{−β(1−η)}).

    ``beta`` may have any shape and be complex (the integrals are analytic in β;
    ∫ u_p u_q without conjugation).

    Returns
    -------
    ndarray, shape (*beta.shape, 4, 4)
    """
    b = beta
    s, c, E = np.sin(b), np.cos(b), np.exp(-b)
    two_b = 2.0 * b
    G = np.empty((*b.shape, 4, 4), dtype=np.result_type(b, float))
    G[..., 0, 0] = 0.5 + np.sin(2 * b) / (2 * two_b)
    G[..., 1, 1] = 0.5 - np.sin(2 * b) / (2 * two_b)
    G[..., 0, 1] = s * s / two_b
    G[..., 0, 2] = (E * (s - c) + 1.0) / two_b
    G[..., 1, 2] = (1.0 - E * (s + c)) / two_b
    G[..., 0, 3] = (s + c - E) / two_b
    G[..., 1, 3] = (s - c + E) / two_b
    G[..., 2, 2] = G[..., 3, 3] = -np.expm1(-2 * b) / two_b
    G[..., 2, 3] = E
    for p, q in ((0, 1), (0, 2), (1, 2), (0, 3), (1, 3), (2, 3)):
        G[..., q, p] = G[..., p, q]
    return G


def clamped_coefficients(
    betas: np.ndarray,
    mass_ratio: float | np.ndarray,
    inertia_ratio: float | np.ndarray,
    decisions: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None,
    reference: int | None = None,
) -> tuple[np.ndarray, tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """Normalized coefficients (A, B, C, D) of clamped beams with tip ratios μ, j.

    The construction of the module docstring, vectorized: ``betas`` has shape
    (..., n), ``mass_ratio`` and ``inertia_ratio`` broadcast against it (e.g.
    shape (..., 1)). Real arguments give the coefficients of
    :class:`ClampedMass` bit for bit.

    Complex arguments (β, μ, j any of them complex) give the analytic
    continuation in (β, μ, j): every arithmetic step is analytic, no real
    part or modulus is taken of a value that is used, and the discrete
    decisions are taken on real parts only, or passed in (``decisions``, as
    returned by a complex call, e.g. at a real point cast to complex):

    ``pick``
        which root condition fixes X:Y (0: clamp sum, 1: consistency row; at a
        root both give the same X:Y, the choice only avoids a row that is ≈ 0);
    ``anchor``
        the coefficient (0 … 3) a complex unnormalized vector is divided by
        before normalizing, the largest in real part: the vector is then ≈ real,
        its squared norm ≈ positive real, and the principal square root
        analytic (the raw vector carries an arbitrary complex scale whose square
        may cross the branch cut). A real vector is normalized as it stands;
    ``sign``
        ±1 applied to the anchored vector, so that the tip deflection (its
        real part) is positive.

    Passing the decisions of a real point (real or complex call alike), or
    ``reference``, the index along the leading axis of a row (e.g. a real point
    among complex ones) whose decisions all rows take, keeps nearby complex
    evaluations on one analytic branch (the Cauchy-integral derivatives of
    :mod:`shapes.following`).

    Returns
    -------
    coefficients : ndarray, shape (..., n, 4)
    decisions : (pick, anchor, sign), each broadcastable to shape (..., n)
    """
    # Tip Cauchy data P_m = φ^(m)(1)/β^m satisfying both tip conditions for
    # any (X, Y): P3 = −μβ P0 and P2 = jβ³ P1, scaled so every P_m is O(|X|+|Y|):
    # P = X (x0, 0, 0, x3) + Y (0, y1, y2, 0).
    b = betas
    complex_path = any(np.iscomplexobj(v) for v in (b, mass_ratio, inertia_ratio))
    s, c, E = np.sin(b), np.cos(b), np.exp(-b)
    c_plus_s, s_minus_c, c_minus_s = c + s, s - c, c - s
    mu_t, j_t = mass_ratio * b, inertia_ratio * b**3
    x0, x3 = 1 / (1 + mu_t), -mu_t / (1 + mu_t)
    y1, y2 = 1 / (1 + j_t), j_t / (1 + j_t)

    def root_rows(A, B, C, Q):
        clamp_sum = A * c_plus_s + B * s_minus_c + 2 * C * E  # φ(0) + φ'(0)/β
        consistency = -0.5 * E * (A * c_minus_s + B * c_plus_s) - Q  # D_root·E − D_tip·E
        return clamp_sum, consistency

    # A = (P0 − P2)/2, B = (P3 − P1)/2, C = (P0 + P1 + P2 + P3)/4 and Q = 4·D·E, which must
    # vanish up to O(E), = (P0 − P1 + P2 − P3)/4, for the X and the Y part.
    clamp_x, consistency_x = root_rows(0.5 * x0, 0.5 * x3, 0.25 * (x0 + x3), 0.25 * (x0 - x3))
    clamp_y, consistency_y = root_rows(-0.5 * y2, -0.5 * y1, 0.25 * (y1 + y2), 0.25 * (y2 - y1))
    if decisions is None:
        pick = anchor = sign = None
    else:
        pick, anchor, sign = decisions
    if pick is None:
        norm_clamp = np.sqrt(clamp_x.real * clamp_x.real + clamp_y.real * clamp_y.real)
        norm_consistency = np.sqrt(
            consistency_x.real * consistency_x.real + consistency_y.real * consistency_y.real
        )
        pick = np.where(norm_consistency >= PICK_RATIO * norm_clamp, 1, 0)
        if reference is not None:
            pick = pick[reference]
    chosen = np.asarray(pick) == 1
    X = np.where(chosen, consistency_y, clamp_y)
    Y = -np.where(chosen, consistency_x, clamp_x)
    P0, P1, P2, P3 = X * x0, Y * y1, Y * y2, X * x3
    A = 0.5 * (P0 - P2)
    B = 0.5 * (P3 - P1)
    C = 0.25 * (P0 + P1 + P2 + P3)
    D = -0.5 * (A * c_minus_s + B * c_plus_s)  # from φ(0) − φ'(0)/β = 0
    coefficients = np.stack([A, B, C, D], axis=-1)
    tip_value = X / (1 + mu_t)
    tip_slope = b * Y / (1 + j_t)
    if anchor is None:
        anchor = np.argmax(np.abs(coefficients.real), axis=-1)
        if reference is not None:
            anchor = anchor[reference]
    scale = np.choose(anchor, (A, B, C, D))
    if complex_path:
        coefficients = coefficients / scale[..., None]
        tip_value, tip_slope = tip_value / scale, tip_slope / scale
        anchor_sign = 1.0
    else:
        # A real vector is normalized as it stands (as ClampedMass always did); the
        # returned sign refers to the anchored vector, like that of a complex call.
        anchor_sign = np.where(scale < 0, -1.0, 1.0)
    norm2 = np.einsum("...p,...pq,...q->...", coefficients, basis_gram(b), coefficients)
    norm2 = norm2 + mass_ratio * tip_value**2 + inertia_ratio * tip_slope**2
    if sign is None:
        sign = np.where(tip_value.real < 0, -1.0, 1.0) * anchor_sign
        if reference is not None:
            sign = sign[reference]
    applied = sign * anchor_sign  # ±1: for a real vector as ClampedMass always had it
    coefficients = coefficients * (applied / np.sqrt(norm2))[..., None]
    return coefficients, (pick, anchor, sign)


def _complex_trig(z: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """cos z and sin z of a complex array from real functions of Re z and Im z."""
    a, b = z.real, z.imag
    cos_a, sin_a, cosh_b, sinh_b = np.cos(a), np.sin(a), np.cosh(b), np.sinh(b)
    cos_z, sin_z = np.empty_like(z), np.empty_like(z)
    cos_z.real, cos_z.imag = cos_a * cosh_b, -sin_a * sinh_b
    sin_z.real, sin_z.imag = sin_a * cosh_b, cos_a * sinh_b
    return cos_z, sin_z


def _complex_exp(z: np.ndarray) -> np.ndarray:
    """e^z of a complex array from real functions of Re z and Im z."""
    modulus, b = np.exp(z.real), z.imag
    out = np.empty_like(z)
    out.real, out.imag = modulus * np.cos(b), modulus * np.sin(b)
    return out


def clamped_evaluate(
    eta: np.ndarray, betas: np.ndarray, coefficients: np.ndarray, derivatives: tuple[int, ...]
) -> list[np.ndarray]:
    """d^m φ/dη^m for each m in ``derivatives``, sharing the transcendental functions.

    ``betas`` (..., n) and ``coefficients`` (..., n, 4) as returned by
    :func:`clamped_coefficients` (complex allowed), ``eta`` (m,) real. Each
    result has shape (..., n, m).
    """
    x = betas[..., :, None] * (1.0 - eta)
    y = betas[..., :, None] * eta
    if np.iscomplexobj(x):
        # From real functions of the real and imaginary parts: cos(a + ib) =
        # cos a cosh b − i sin a sinh b etc. This is accurate in the imaginary part even
        # for a complex step (b ~ 1e-30), and cheaper than the complex cos, sin and exp.
        cos_x, sin_x = _complex_trig(x)
        root_layer = _complex_exp(-y)
        if np.max(betas.real, initial=0.0) < 600.0:  # e^{−βη} ≥ e^{−600}: e^{−βξ} = e^{−β}/e^{−βη}
            tip_layer = np.exp(-betas)[..., :, None] / root_layer
        else:
            tip_layer = _complex_exp(-x)
    else:
        cos_x, sin_x = np.cos(x), np.sin(x)
        tip_layer, root_layer = np.exp(-x), np.exp(-y)
    A, B, C, D = (coefficients[..., k, None] for k in range(4))
    # The four terms and their quarter-turn partners: d/dξ (A cos + B sin) = −A sin + B cos.
    a_cos, b_sin, a_sin, b_cos = A * cos_x, B * sin_x, A * sin_x, B * cos_x
    tip_layer = C * tip_layer
    root_layer = D * root_layer
    even = (a_cos + b_sin, b_cos - a_sin)  # d^m/dξ^m of A cos βξ + B sin βξ, over β^m, m = 0, 1
    out = []
    for m in derivatives:
        # d/dη = −d/dξ: d^m/dη^m = (−β)^m × [±even[m % 2] + (−1)^m C e^{−βξ} + D e^{−βη}].
        trig = even[m % 2] if m % 4 < 2 else -even[m % 2]
        values = trig + tip_layer if m % 2 == 0 else trig - tip_layer
        values += root_layer
        out.append(values if m == 0 else (-betas[..., :, None]) ** m * values)
    return out
