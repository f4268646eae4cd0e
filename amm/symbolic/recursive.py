"""The recursive derivation of a planar arm: Newton–Euler written symbolically, link by link, every
kinematic and force quantity a named intermediate symbol (docs/SYMBOLIC.md, recursive form).

The closed form (:mod:`amm.symbolic.planar`) writes each entry of M(q) as one expression, which
grows combinatorially with the chain. Here the chain's recursion is kept, as the compiled engine
runs it (docs/MODEL.md, Dynamics): per link frame its velocity (v, ω) and acceleration in its own
axes, outward; per body the Euler–Poincaré (Kirchhoff) force of T = ½ νᵀM_b(δ)ν,

    f = M_b ν̇ + Ṁ_b ν + (ω × p_v, v × p_v, 0) − (0, 0, ∂T/∂δ),     p = M_b ν,

and, inward, the forces of the outer links carried back through each tip (Kane's generalized
forces: the joint row takes the moment, the deflection rows φ(L) f_y + r τ). Three uses of the
one pass: h = C q̇ (q̈ = 0, no gravity), G (q̇ = q̈ = 0, the base accelerating at −g) and each
column j of M (q̇ = 0, q̈ = e_j, from the link of q_j outward and back to it: the lower triangle,
the rest by symmetry). Every quantity is named as it is made (:class:`Intermediates`), so the
expressions grow about linearly with the links; :meth:`Intermediates.closed` substitutes them back
(the closed form of small arms) and :meth:`Intermediates.diff` differentiates through them by the
chain rule (∂M/∂q, C).
"""

from __future__ import annotations

import pickle

import sympy as sp

from amm.symbolic.parameters import Parameters, damping_block, link_integrals, payloads, root_slopes
from core.arm import Arm


class Intermediates:
    """Named intermediate symbols in evaluation order, with their definitions.

    Attributes
    ----------
    items : list of (Symbol, Expr)
        Each symbol defined by an expression of the coordinates, rates, parameters and earlier
        symbols.
    latex : dict
        LaTeX name of each symbol.
    """

    def __init__(self) -> None:
        self.items: list = []
        self.definitions: dict = {}
        self.latex: dict = {}
        self._closed: dict = {}
        self._derivatives: dict = {}
        self._depends: dict = {}

    def __reduce__(self):
        """Pickled as one byte string, unpickled on first use (a cache load that only runs the
        stored generated code never builds the intermediates' sympy objects)."""
        return (_unpickle_later, (pickle.dumps(self.__dict__, protocol=pickle.HIGHEST_PROTOCOL),))

    def __getattr__(self, name: str):
        payload = self.__dict__.pop("_payload", None)
        if payload is None:
            raise AttributeError(name)
        self.__dict__.update(pickle.loads(payload))
        return getattr(self, name)

    def __call__(self, name: str, expr, latex: str | None = None):
        """``expr`` as the symbol ``name`` (numbers and single symbols are returned as they are)."""
        expr = sp.sympify(expr)
        if expr.is_Atom or (
            expr.is_Mul and len(expr.args) == 2 and expr.args[0].is_Number and expr.args[1].is_Atom
        ):
            return expr
        symbol = sp.Symbol(name, real=True)
        if symbol in self.definitions:
            raise ValueError(f"intermediate {name!r} is defined twice")
        self.items.append((symbol, expr))
        self.definitions[symbol] = expr
        self.latex[symbol] = latex or name
        depends = set()
        for s in expr.free_symbols:
            depends |= self._depends.get(s, {s})
        self._depends[symbol] = frozenset(depends)
        return symbol

    def vector(self, name: str, exprs, latex: tuple | None = None) -> list:
        """Each entry of ``exprs`` named ``{name}_{k}`` (LaTeX ``head_{sub,k}`` of ``latex`` =
        (head, sub))."""
        head, sub = latex if latex is not None else (name, "")
        return [
            self(f"{name}_{k}", e, f"{head}_{{{sub}{',' if sub != '' else ''}{k}}}")
            for k, e in enumerate(exprs)
        ]

    def depends(self, expr) -> set:
        """The coordinates, rates and parameters ``expr`` depends on through its intermediates."""
        out = set()
        for s in sp.sympify(expr).free_symbols:
            out |= self._depends.get(s, {s})
        return out

    def closure(self, exprs) -> list:
        """The (symbol, definition) pairs ``exprs`` need, in evaluation order."""
        needed = set()
        stack = [s for e in exprs for s in sp.sympify(e).free_symbols if s in self.definitions]
        while stack:
            s = stack.pop()
            if s not in needed:
                needed.add(s)
                stack.extend(t for t in self.definitions[s].free_symbols if t in self.definitions)
        return [(s, e) for s, e in self.items if s in needed]

    def closed(self, expr):
        """``expr`` with every intermediate substituted (the closed form: large for long chains)."""
        for s, e in self.closure([expr]):
            if s not in self._closed:
                self._closed[s] = e.xreplace(self._closed)
        return sp.sympify(expr).xreplace(self._closed)

    def diff(self, expr, x):
        """d expr / dx through the intermediates (chain rule; each derivative named once)."""
        expr = sp.sympify(expr)
        out = expr.diff(x) if x in expr.free_symbols else sp.S.Zero
        for s in expr.free_symbols:
            if s in self.definitions and x in self._depends[s]:
                out += expr.diff(s) * self._derivative(s, x)
        return out

    def _derivative(self, s, x):
        key = (s, x)
        if key not in self._derivatives:
            value = self.diff(self.definitions[s], x)
            self._derivatives[key] = self(f"D{s}_{x}", value, f"\\partial_{{{x}}}{self.latex[s]}")
        return self._derivatives[key]


def _unpickle_later(payload: bytes) -> Intermediates:
    """An :class:`Intermediates` whose state is unpickled on first use."""
    out = Intermediates.__new__(Intermediates)
    out.__dict__["_payload"] = payload
    return out


def _rot(c, s, v) -> tuple:
    """R(φ) v for R = [[c, −s], [s, c]]."""
    return c * v[0] - s * v[1], s * v[0] + c * v[1]


def _rot_t(c, s, v) -> tuple:
    """R(φ)ᵀ v."""
    return c * v[0] + s * v[1], -s * v[0] + c * v[1]


class _Link:
    """The constants and the named configuration terms of one link of a planar arm."""

    def __init__(self, arm: Arm, engine, P: Parameters, X: Intermediates, q: tuple, i: int, turn) -> None:
        joint, link = arm.joints[i], arm.links[i]
        number = self.number = i + 1
        self.i = i
        self.L = P(f"L{number}", link.length, f"length of link {number} [m]")
        angle = X(f"phi_{number}", turn + q[i] + joint.theta_offset, f"\\varphi_{{{number}}}")
        self.c = X(f"c_{number}", sp.cos(angle), f"c_{{{number}}}")
        self.s = X(f"s_{number}", sp.sin(angle), f"s_{{{number}}}")
        self.angle = angle
        self.flexible = link.is_flexible
        self.mh = P(f"mh{number}", joint.hub_mass, f"hub mass of joint {number} [kg]")
        self.Jh = P(f"Jh{number}", joint.hub_inertia, f"hub inertia of joint {number} [kg m$^2$]")
        self.Jr = P(
            f"Jr{number}",
            joint.reflected_inertia,
            f"reflected motor inertia $I_m N^2$ of joint {number} [kg m$^2$]",
        )
        self.bv = P(f"bv{number}", joint.viscous_friction, f"viscous friction of joint {number} [N m s/rad]")
        self.cols = slice(0, 0)
        self.dphi0 = sp.zeros(0, 1)
        if self.flexible:
            self._flexible(arm, engine, P, X, q, link)
        else:
            self._rigid(P, link)
        self.payloads = []
        for suffix, payload in payloads(arm, number):
            mass = P(f"mp{suffix}", payload.mass, "payload mass [kg]")
            inertia = P(
                f"Jp{suffix}", payload.planar_inertia, "payload inertia about its centre of mass [kg m$^2$]"
            )
            self.payloads.append((mass, inertia))

    def _rigid(self, P: Parameters, link) -> None:
        number = self.number
        m = P(f"m{number}", link.mass, f"mass of link {number} [kg]")
        cx = P(f"lc{number}", link.com[0], f"centre of mass of link {number} along $x_{number}$ [m]")
        cy = P(f"lcy{number}", link.com[1], f"centre of mass of link {number} along $y_{number}$ [m]")
        I = P(
            f"I{number}", link.planar_inertia, f"inertia of link {number} about its centre of mass [kg m$^2$]"
        )
        self.m, self.Sx, self.Sy, self.I = m, m * cx, m * cy, I + m * (cx**2 + cy**2)
        self.first = (cx, cy)
        self.oy, self.turn, self.m_modes = sp.S.Zero, sp.S.Zero, 0
        self.delta = sp.zeros(0, 1)

    def _flexible(self, arm: Arm, engine, P: Parameters, X: Intermediates, q: tuple, link) -> None:
        number = self.number
        basis = engine.bases[number]
        self.cols = engine.flex_columns[number]
        self.m_modes = basis.n
        self.delta = sp.Matrix(q[self.cols])
        k = self.k = link_integrals(
            P, number, link, basis, self.L, f"bending stiffness of link {number} [N m$^2$]"
        )
        self.m, self.Sx = k.mass, k.first_x
        self.Sy = X(f"Sy_{number}", (k.A.T * self.delta)[0], f"S_{{y,{number}}}")
        self.Nd = sp.Matrix(X.vector(f"Nd_{number}", k.N * self.delta, ("(N\\delta)", f"{number}")))
        self.I = X(f"I_{number}", k.second_x + (self.delta.T * self.Nd)[0] + k.J_sum, f"I_{{{number}}}")
        self.coupling = k.c + k.slope
        self.Mdd = k.N + k.rotary
        self.A = k.A
        self.tip = k.tip
        self.r = k.tip_slope if arm.tip_rotation == "slope" else k.tip / self.L
        self.oy = X(f"oy_{number}", (k.tip.T * self.delta)[0], f"o_{{y,{number}}}")
        self.turn = X(f"tau_{number}", (self.r.T * self.delta)[0], f"\\vartheta_{{{number}}}")
        if basis.frame == "pinned":
            self.dphi0 = root_slopes(P, number, basis)

    def body_force(self, X: Intermediates, tag: str, v, w, a, al, dd, ddd) -> tuple:
        """The Kirchhoff force (f_x, f_y, τ) on the link frame and the deflection rows of the
        link's body of velocity (v, ω, δ̇ = ``dd``) and rate (a, α, δ̈ = ``ddd``), link axes."""
        n = self.number
        m, Sx, Sy, I = self.m, self.Sx, self.Sy, self.I
        if not self.flexible:
            px, py = m * v[0] - Sy * w, m * v[1] + Sx * w
            fx = m * a[0] - Sy * al - w * py
            fy = m * a[1] + Sx * al + w * px
            tau = -Sy * a[0] + Sx * a[1] + I * al + v[0] * py - v[1] * px
            return X.vector(f"f{tag}_{n}", (fx, fy, tau), (f"f^{{{tag}}}", f"{n}")), []
        A, Nd, cpl = self.A, self.Nd, self.coupling
        Ad = (A.T * dd)[0] if dd is not None else sp.S.Zero
        px = m * v[0] - Sy * w
        py = X(f"py{tag}_{n}", m * v[1] + Sx * w + Ad, f"p^{{{tag}}}_{{y,{n}}}")
        Add = (A.T * ddd)[0] if ddd is not None else sp.S.Zero
        cdd = (cpl.T * ddd)[0] if ddd is not None else sp.S.Zero
        Sy_dot = Ad
        I_dot = 2 * (Nd.T * dd)[0] if dd is not None else sp.S.Zero
        fx = m * a[0] - Sy * al - Sy_dot * w - w * py
        fy = m * a[1] + Sx * al + Add + w * px
        tau = -Sy * a[0] + Sx * a[1] + I * al + cdd - Sy_dot * v[0] + I_dot * w + v[0] * py - v[1] * px
        frame = X.vector(f"f{tag}_{n}", (fx, fy, tau), (f"f^{{{tag}}}", f"{n}"))
        rows = A * a[1] + cpl * al
        if ddd is not None:
            rows += self.Mdd * ddd
        rows += A * w * v[0] - Nd * w**2  # − ∂T/∂δ
        return frame, X.vector(f"fd{tag}_{n}", rows, (f"f^{{{tag}}}", f"\\delta,{n}"))


def outward(links: list, X: Intermediates, tag: str, qd, qdd, base_a, start: int) -> list:
    """Per link from ``start``: (v, ω, a, α, δ̇, δ̈) of its frame (link axes) and its tip (v_t, ω_t,
    a_t, α_t, link axes); zero rates are None."""
    out = [None] * len(links)
    vt, wt, at, alt = (0, 0), sp.S.Zero, base_a, sp.S.Zero
    for link in links[start:]:
        i, n = link.i, link.number
        c, s = link.c, link.s
        prev_turn_rate = sp.S.Zero
        if i > start and links[i - 1].flexible and qd is not None:
            prev_turn_rate = (links[i - 1].r.T * sp.Matrix(qd[links[i - 1].cols]))[0]
        rate = prev_turn_rate + (qd[i] if qd is not None else 0)
        v = _rot_t(c, s, vt)
        a = _rot_t(c, s, at)
        a = (a[0] + rate * (-s * vt[0] + c * vt[1]), a[1] - rate * (c * vt[0] + s * vt[1]))
        w = X(f"w{tag}_{n}", wt + (qd[i] if qd is not None else 0), f"\\omega^{{{tag}}}_{{{n}}}")
        al = X(f"al{tag}_{n}", alt + qdd[i], f"\\alpha^{{{tag}}}_{{{n}}}")
        v = X.vector(f"v{tag}_{n}", v, (f"v^{{{tag}}}", f"{n}")) if qd is not None else (0, 0)
        a = X.vector(f"a{tag}_{n}", a, (f"a^{{{tag}}}", f"{n}"))
        dd = sp.Matrix(qd[link.cols]) if qd is not None and link.flexible else None
        ddd = sp.Matrix(qdd[link.cols]) if link.flexible else None
        if ddd is not None and ddd == sp.zeros(*ddd.shape):
            ddd = None
        out[i] = (v, w, a, al, dd, ddd)
        if link.flexible:
            oy_dot = (link.tip.T * dd)[0] if dd is not None else sp.S.Zero
            oy_ddot = (link.tip.T * ddd)[0] if ddd is not None else sp.S.Zero
            vt = (v[0] - w * link.oy, v[1] + w * link.L + oy_dot)
            at = (a[0] - al * link.oy - w * oy_dot, a[1] + al * link.L + oy_ddot)
            wt = w + ((link.r.T * dd)[0] if dd is not None else 0)
            alt = al + ((link.r.T * ddd)[0] if ddd is not None else 0)
        else:
            vt = (v[0], v[1] + w * link.L)
            at = (a[0], a[1] + al * link.L)
            wt, alt = w, al
        if qd is not None:
            vt = tuple(X.vector(f"vt{tag}_{n}", vt, (f"v^{{{tag}}}", f"t,{n}")))
        at = tuple(X.vector(f"at{tag}_{n}", at, (f"a^{{{tag}}}", f"t,{n}")))
        out[i] = (*out[i], vt, wt, at, alt)
    return out


def _inward(links: list, X: Intermediates, tag: str, state: list, qdd, n_dof: int, start: int) -> list:
    """Generalized forces (a list of n_dof, zeros outside the links from ``start``)."""
    Q = [sp.S.Zero] * n_dof
    child = None  # (F_x, F_y, τ) of the next link, its axes
    for link in reversed(links[start:]):
        i, n = link.i, link.number
        v, w, a, al, dd, ddd, vt, _, at, alt = state[i]
        frame, rows = link.body_force(X, tag, v, w, a, al, dd, ddd)
        F = list(frame)
        # tip forces in link axes: the payloads and the next link
        ftx, fty, tt = sp.S.Zero, sp.S.Zero, sp.S.Zero
        for mass, inertia in link.payloads:
            ftx += mass * (at[0] - w * vt[1])  # a point mass in axes turning at ω
            fty += mass * (at[1] + w * vt[0])
            tt += inertia * alt
        if child is not None:
            nxt = links[i + 1]
            cx, cy = _rot(nxt.c, nxt.s, child[:2])
            ftx, fty, tt = ftx + cx, fty + cy, tt + child[2]
        F[0] += ftx
        F[1] += fty
        F[2] += tt + link.L * fty - link.oy * ftx
        # hub: mass at the frame origin, inertia turning with the frame (+ φ'(0)ᵀδ̇, pinned)
        if link.mh != 0:
            F[0] += link.mh * (a[0] - w * v[1])
            F[1] += link.mh * (a[1] + w * v[0])
        hub = sp.S.Zero
        root = (link.dphi0.T * ddd)[0] if link.dphi0.rows and ddd is not None else sp.S.Zero
        if link.Jh != 0:
            hub = link.Jh * (al + root)
            F[2] += hub
        child = X.vector(f"F{tag}_{n}", F, (f"F^{{{tag}}}", f"{n}"))
        motor = link.Jr * (qdd[i] + root)  # the motor turns at the actuated rate bᵀq̇ (B's column)
        Q[i] = child[2] + motor
        if link.flexible:
            extra = link.tip * fty + link.r * tt
            if link.dphi0.rows:
                extra += link.dphi0 * (hub + motor)
            for k, col in enumerate(range(link.cols.start, link.cols.stop)):
                Q[col] = rows[k] + extra[k]
    return Q


def _positions(links: list, X: Intermediates, g) -> tuple:
    """Gravity potential, tip (x, y) and per link (x, y, angle) of the link frame, base axes."""
    angle, p = sp.S.Zero, (sp.S.Zero, sp.S.Zero)
    V, frames = sp.S.Zero, []
    for link in links:
        n = link.number
        angle = X(f"th_{n}", angle + link.angle, f"\\theta^{{a}}_{{{n}}}")
        c = X(f"C_{n}", sp.cos(angle), f"C_{{{n}}}")
        s = X(f"S_{n}", sp.sin(angle), f"S_{{{n}}}")
        frames.append((p[0], p[1], angle))
        first = _rot(c, s, (link.Sx, link.Sy))
        V -= (link.m + link.mh) * (g[0] * p[0] + g[1] * p[1]) + g[0] * first[0] + g[1] * first[1]
        o = _rot(c, s, (link.L, link.oy))
        p = tuple(X.vector(f"p_{n}", (p[0] + o[0], p[1] + o[1]), ("p", f"{n}")))
        for mass, _ in link.payloads:
            V -= mass * (g[0] * p[0] + g[1] * p[1])
    return V, sp.Matrix(p), frames


def recursive_terms(arm: Arm, engine, P: Parameters, q: tuple, qd: tuple, qdd: tuple) -> dict:
    """M, h, G, K, D, B, V (gravity), tip and frames of a planar arm of revolute joints, and the
    inverse dynamics M q̈ + h + G of accelerations ``qdd`` (one Newton–Euler pass), in named
    intermediates (:class:`Intermediates`, returned as ``"X"``), with the links and the gravity
    vector (``"links"``, ``"gravity"``: what :mod:`amm.symbolic.articulated` continues from)."""
    n = len(q)
    X = Intermediates()
    g = P.gravity(arm, "xy")
    links, turn = [], sp.S.Zero
    for i in range(arm.n_links):
        link = _Link(arm, engine, P, X, q, i, turn)
        links.append(link)
        turn = link.turn
    K, D, B = sp.zeros(n, n), sp.zeros(n, n), sp.zeros(n, arm.n_joints)
    B[: arm.n_joints, : arm.n_joints] = sp.eye(arm.n_joints)
    for link in links:
        if link.flexible:
            cols = link.cols
            K[cols, cols] = link.k.EI * link.k.K
            if link.dphi0.rows:
                B[cols, link.i] = link.dphi0
            damping = damping_block(engine, link.number, arm.links[link.i], link.Mdd, K[cols, cols])
            if damping is not None:
                D[cols, cols] = damping
        column = B[:, link.i]
        if link.bv != 0:
            D += link.bv * (column * column.T)
    zero = [sp.S.Zero] * n
    state = outward(links, X, "h", qd, zero, (0, 0), 0)
    h = _inward(links, X, "h", state, zero, n, 0)
    base = (-g[0], -g[1])
    G = _inward(links, X, "g", outward(links, X, "g", None, zero, base, 0), zero, n, 0)
    link_of = [0] * n
    for link in links:
        link_of[link.i] = link.i
        for col in range(link.cols.start, link.cols.stop):
            link_of[col] = link.i
    M = sp.zeros(n, n)
    done = set()
    for j in range(n):
        start = link_of[j]
        unit = list(zero)
        unit[j] = sp.S.One
        tag = f"m{j}"
        column = _inward(links, X, tag, outward(links, X, tag, None, unit, (0, 0), start), unit, n, start)
        for r in range(n):
            if link_of[r] >= start and (r, j) not in done:
                M[r, j] = M[j, r] = column[r]
                done |= {(r, j), (j, r)}
    inverse = _inward(links, X, "id", outward(links, X, "id", qd, list(qdd), base, 0), list(qdd), n, 0)
    V, tip, frames = _positions(links, X, g)
    return {
        "M": M,
        "h": sp.Matrix(h),
        "G": sp.Matrix(G),
        "K": K,
        "D": D,
        "B": B,
        "V": V,
        "tip": tip,
        "frames": frames,
        "X": X,
        "inverse": sp.Matrix(inverse),
        "links": links,
        "gravity": g,
    }
