#!/usr/bin/python3
"""A planar model of the program's beam discretisation, written without any of its code, to
say in advance what a mesh should give (the discretisation error of the tip under a dead load
and of the roll-up) and so where the test's tolerances stand.

What it assumes of the element (the Simo-Reissner beam in director form, seed 000 sec. 5):
nodes carry a position phi_a and orthonormal directors; in the plane the nodal directors are
d1 = (cos psi_a, sin psi_a), d2 = (-sin psi_a, cos psi_a) (exactly the constrained nodal
triad, so psi_a is just a parametrisation); positions and directors are interpolated by the
same Lagrange polynomials (order 1: two nodes, order 2: three), so between the nodes the
directors are neither unit nor orthogonal. Strains (straight reference, Gamma0 = (1, 0),
K0 = 0):
    axial  Gamma1 = d1 . phi' - 1,   shear  Gamma2 = d2 . phi',
    bending K = (d1' . d2 - d2' . d1) / 2
and the strain energy int (EA Gamma1^2 + GA Gamma2^2 + EI K^2) / 2 ds by reduced Gauss
integration (order 1: one point, order 2: two). The static equilibrium under a load factor is
found by Newton's method (element gradients by complex-step differentiation, exact; element
Hessians by central differences of those), load steps of 1/10 (1/20 for the roll-up),
halved where Newton fails.
If the program's element makes other choices (another curvature measure, full integration),
its numbers differ at the level of the discretisation error, not beyond.

Command line:
    planar_director_beam.py           the errors of the test's meshes (tip load, roll-up)
                                      against the elastica and the arc (two minutes)
    planar_director_beam.py --check   self-checks (exit status 1 on failure)
"""
import sys

import numpy as np

import elastica


def _lagrange(order, xi):
    if order == 1:
        return np.array([(1 - xi) / 2, (1 + xi) / 2]), np.array([-0.5, 0.5])
    return (np.array([xi * (xi - 1) / 2, 1 - xi ** 2, xi * (xi + 1) / 2]),
            np.array([xi - 0.5, -2 * xi, xi + 0.5]))


class Beam:
    """a cantilever of length L along x, clamped at node 0; stiffnesses EA, GA, EI"""

    def __init__(self, order, elements, length=1.0, ea=4.8e5, ga=1.54e5, ei=1.0):
        self.order, self.ne, self.L = order, elements, length
        self.ea, self.ga, self.ei = ea, ga, ei
        self.nn = order * elements + 1
        self.h = length / elements
        xg, wg = np.polynomial.legendre.leggauss(order)   # reduced integration
        self.gauss = [(_lagrange(order, x), w) for x, w in zip(xg, wg)]
        # element dof map: node a of element e -> dofs 3 (order e + a) + (0, 1, 2)
        self.map = np.array([[3 * (order * e + a) + c for a in range(order + 1) for c in range(3)]
                             for e in range(elements)])
        self.q = np.zeros(3 * self.nn)
        self.q[0::3] = np.linspace(0, length, self.nn)

    def element_energy(self, qe):
        """strain energy of each element, qe (ne, 3 (order + 1)) real or complex"""
        x, y, psi = qe[:, 0::3], qe[:, 1::3], qe[:, 2::3]
        c, s = np.cos(psi), np.sin(psi)
        jac = self.h / 2
        out = 0
        for (N, dN), w in self.gauss:
            B = dN / jac
            px, py = x @ B, y @ B
            d1x, d1y, d2x, d2y = c @ N, s @ N, -s @ N, c @ N
            d1px, d1py, d2px, d2py = c @ B, s @ B, -s @ B, c @ B
            g1 = d1x * px + d1y * py - 1
            g2 = d2x * px + d2y * py
            k = 0.5 * ((d1px * d2x + d1py * d2y) - (d2px * d1x + d2py * d1y))
            out = out + w * jac * 0.5 * (self.ea * g1 ** 2 + self.ga * g2 ** 2 + self.ei * k ** 2)
        return out

    def element_gradient(self, qe):
        n = qe.shape[1]
        g = np.zeros(qe.shape)
        hc = 1e-30
        for j in range(n):
            z = qe.astype(complex)
            z[:, j] += 1j * hc
            g[:, j] = self.element_energy(z).imag / hc
        return g

    def assemble(self, q):
        qe = q[self.map]
        g = self.element_gradient(qe)
        n = qe.shape[1]
        H = np.zeros((self.ne, n, n))
        scale = np.maximum(np.abs(qe), 1.0)
        for j in range(n):
            hj = 1e-6 * scale[:, j]
            qp, qm = qe.copy(), qe.copy()
            qp[:, j] += hj
            qm[:, j] -= hj
            H[:, :, j] = (self.element_gradient(qp) - self.element_gradient(qm)) / (2 * hj[:, None])
        G = np.zeros(3 * self.nn)
        K = np.zeros((3 * self.nn, 3 * self.nn))
        for e in range(self.ne):
            G[self.map[e]] += g[e]
            K[np.ix_(self.map[e], self.map[e])] += 0.5 * (H[e] + H[e].T)
        return G, K

    def solve(self, load, steps):
        """load(lam) -> external generalised force vector; equilibrium at lam = 1/steps .. 1,
        a load step whose Newton iteration fails is halved (at most 10 times in a row)"""
        free = np.arange(3, 3 * self.nn)
        lam, dlam, halvings = 0.0, 1.0 / steps, 0
        while lam < 1.0 - 1e-14:
            target = min(1.0, lam + dlam)
            f = load(target)
            q0 = self.q.copy()
            ok = False
            for _ in range(30):
                G, K = self.assemble(self.q)
                r = (G - f)[free]
                dq = np.linalg.solve(K[np.ix_(free, free)], -r)
                if not np.all(np.isfinite(dq)):
                    break
                self.q[free] += dq
                if np.max(np.abs(dq)) < 1e-13:
                    ok = True
                    break
            if ok:
                lam, halvings = target, 0
                dlam = min(1.0 / steps, 2 * dlam)
            else:
                self.q = q0
                dlam /= 2
                halvings += 1
                if halvings > 10:
                    raise RuntimeError("no convergence at load factor %.4f" % target)
        return self.q.reshape(-1, 3)


def tip_load(k, order, elements):
    """(u/L, v/L) of the tip under P = k EI / L^2 along -y"""
    b = Beam(order, elements)

    def load(lam):
        f = np.zeros(3 * b.nn)
        f[-2] = -lam * k * b.ei / b.L ** 2
        return f

    n = b.solve(load, 10)
    return 1 - (n[-1, 0] - n[0, 0]) / b.L, -(n[-1, 1] - n[0, 1]) / b.L


def rollup(m, order, elements):
    """node positions (x, y)/L under the tip moment M = m pi EI / L (turning towards +y)"""
    b = Beam(order, elements)

    def load(lam):
        f = np.zeros(3 * b.nn)
        f[-1] = lam * m * np.pi * b.ei / b.L
        return f

    n = b.solve(load, 20)
    return n[:, 0] / b.L, n[:, 1] / b.L


def check():
    fails = []

    def ok(cond, what):
        print(("ok    " if cond else "FAIL  ") + what)
        if not cond:
            fails.append(what)

    # small loads: the linear Timoshenko cantilever, v/L = k/3 + k EI / (GA L^2); one-point
    # integrated linear elements lose exactly 1/(4 N^2) of the bending part, reduced
    # quadratic ones are exact at the nodes
    k = 1e-4
    b = Beam(1, 4)
    want = k / 3 * (1 - 1 / 64.0) + k * b.ei / (b.ga * b.L ** 2)
    _, v = tip_load(k, 1, 4)
    ok(abs(v / want - 1) < 1e-4, "linear elements, 4: v/L = k/3 (1 - 1/(4 N^2)) + k EI/GA L^2 "
       "(%.2e)" % (v / want - 1))
    want = k / 3 + k * b.ei / (b.ga * b.L ** 2)
    _, v = tip_load(k, 2, 2)
    ok(abs(v / want - 1) < 1e-4, "quadratic elements, 2: v/L = k/3 + k EI/GA L^2 (%.2e)"
       % (v / want - 1))
    # the complex-step gradient against central differences of the energy
    rng = np.random.default_rng(1)
    b = Beam(2, 3)
    qe = b.q[b.map] + 0.1 * rng.standard_normal(b.map.shape)
    g = b.element_gradient(qe)
    fd = np.zeros_like(g)
    for j in range(qe.shape[1]):
        qp, qm = qe.copy(), qe.copy()
        qp[:, j] += 1e-6
        qm[:, j] -= 1e-6
        fd[:, j] = (b.element_energy(qp) - b.element_energy(qm)) / 2e-6
    err = np.max(np.abs(g - fd)) / np.max(np.abs(g))
    ok(err < 1e-6, "element gradient = central differences of the energy (%.1e)" % err)
    # rigid motion: no strain energy
    q = b.q.reshape(-1, 3).copy()
    a = 0.7
    R = np.array([[np.cos(a), -np.sin(a)], [np.sin(a), np.cos(a)]])
    q[:, :2] = q[:, :2] @ R.T + [0.3, -0.2]
    q[:, 2] += a
    ok(np.max(np.abs(b.element_energy(q.ravel()[b.map]))) < 1e-20,
       "a rigid motion strains nothing")
    print("planar_director_beam: %d failed" % len(fails))
    return not fails


def main(argv):
    if "--check" in argv:
        return 0 if check() else 1
    print("tip load (EA 4.8e5, GA 1.54e5, EI 1: the decks' section), error u/L, v/L vs elastica:")
    for k in (0.25, 1.0, 3.0, 10.0):
        ur, vr, _ = elastica.closed(k)
        for order, n in ((1, 8), (1, 16), (1, 32), (1, 64), (2, 2), (2, 4), (2, 8), (2, 16)):
            try:
                u, v = tip_load(k, order, n)
            except (RuntimeError, np.linalg.LinAlgError) as e:
                print("  k %5g order %d x %2d: %s" % (k, order, n, e))
                continue
            print("  k %5g order %d x %2d: u %+.2e  v %+.2e" % (k, order, n, u - ur, v - vr))
    print("roll-up, tip and largest node error / L:")
    for m in (1.0, 2.0):
        for order, n in ((1, 20), (1, 40), (1, 80), (2, 8), (2, 16)):
            try:
                x, y = rollup(m, order, n)
            except (RuntimeError, np.linalg.LinAlgError) as e:
                print("  m %g order %d x %2d: %s" % (m, order, n, e))
                continue
            s = np.arange(len(x)) / (len(x) - 1)
            xr, yr = elastica.rollup(m, s)
            e = np.hypot(x - xr, y - yr)
            print("  m %g order %d x %2d: tip %.2e, nodes %.2e" % (m, order, n, e[-1], e.max()))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
