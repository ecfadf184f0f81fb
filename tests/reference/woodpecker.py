#!/usr/bin/python3
"""A second, independent computation of decks/woodpecker.yaml (decks/contacts/ until the
program reads contacts): the planar rigid woodpecker of seed 002 sec. 6.3, Table 6.3, as the
deck reads it (its comments give every value and assumption), in minimal coordinates
q = (x_s, y_s, phi_s, phi_b): the sleeve's centre and angle and the bird's absolute angle,
the revolute joint built in, the rotational spring -c_s (phi_b - phi_s).

The method is Moreau-Jean time stepping (theta = 0.5: q_M = q_n + dt/2 u_n, the forces at
q_M, contacts of the step those whose predicted gap g(q_n) + dt g'(q_n, u_n) is <= 0, the
velocity-level Signorini / Newton / Coulomb problem solved by projected Gauss-Seidel to
1e-13, q_{n+1} = q_M + dt/2 u_{n+1}; no position projection, the gaps sink by a few
micrometres). It is not event-driven, so it is a reference of the same family as the
program's integrator but shares none of its code, its deck reader or its contact geometry:
the sleeve's four hole corners against the pole's faces x = -r_p and x = +r_p, the picker
against x = +r_p, all with Coulomb mu = 0.15 and restitution 0.

Picker impacts come in groups (one impact and, in some cycles, one to three small re-impacts
within 2 ms); a cycle runs from one group's first impact to the next. Measured over 1.5 s
(9 cycles): at dt = 5e-5 the periods from the third cycle on are 0.1610 ... 0.1612 s (the
step quantizes them to 3e-4) and the descents 18.78 ... 18.89 mm per cycle (the first cycles:
0.1596, 0.1610 s, 19.2, 18.7 mm): the motion settles into a limit cycle of period 0.161 s
(6.2 Hz) and descent 18.8 mm per cycle (0.12 m/s) to within 0.6 %. At dt = 1e-4 the periods
spread over 0.1595 ... 0.1624 s and the descents over 18.6 ... 19.4 mm: 1e-3 constancy needs
the smaller step here. Run time: about 45 s per simulated second at dt = 1e-4.

    /usr/bin/python3 tests/reference/woodpecker.py [dt] [t_end]
"""
import sys

import numpy as np

# Table 6.3 (seed 002 sec. 6.3), as read in decks/contacts/woodpecker.yaml
rp = 2.5e-3     # pole radius r_p
gam = 0.1e-3    # clearance gamma
D = 2 * rp + gam  # hole D_s = 2 r_p + gamma
hs = 6e-3       # sleeve height h_s
ms = 5e-3       # sleeve mass m_s
Js = 125e-9     # sleeve inertia J_s3 (about z)
ds = 10e-3      # sleeve axis to joint d_s
cs = 0.05       # joint spring c_s [N m/rad]
dw = 14e-3      # joint to the bird's centre of gravity d_w
mw = 60e-3      # bird mass m_w
Jw = 12e-6      # bird inertia J_w3 (about z)
dp = 20e-3      # picker: back from the centre of gravity, d_p
hp = 20e-3      # picker: above the centre of gravity, h_p
mu = 0.15       # friction, all contacts
e = 0.0         # restitution (the seed gives none)
g = 9.81
Y0 = 0.475      # y_wp,0: the sleeve's centre and the joint
RATE0 = -np.pi  # phi'_wp,0: the bird's rate relative to the sleeve


def R(a): c,s=np.cos(a),np.sin(a); return np.array([[c,-s],[s,c]])
def perp(v): return np.array([-v[1],v[0]])
def kin(q):
    S=q[:2]; rs=R(q[2])@np.array([ds,0.]); Jp=S+rs; rb=R(q[3])@np.array([dw,0.]); B=Jp+rb
    # jacobian of bird COG: d/dq
    JB=np.zeros((2,4)); JB[:,0]=[1,0]; JB[:,1]=[0,1]; JB[:,2]=perp(rs); JB[:,3]=perp(rb)
    return S,rs,Jp,rb,B,JB
def mass(q):
    S,rs,Jp,rb,B,JB=kin(q)
    M=np.zeros((4,4)); M[0,0]=M[1,1]=ms; M[2,2]=Js; M+=mw*JB.T@JB; M[3,3]+=Jw
    return M
def force(q,u):
    S,rs,Jp,rb,B,JB=kin(q)
    h=np.zeros(4); h[1]-=ms*g
    acc_q = -(u[2]**2)*rs-(u[3]**2)*rb     # Jdot u for the bird COG
    h+=JB.T@(mw*np.array([0,-g]) - mw*acc_q)
    tau=-cs*(q[3]-q[2]); h[3]+=tau; h[2]-=tau
    return h
def contacts(q):
    """list of (gap, WN, WT) : WN normal, WT tangential (y)"""
    S,rs,Jp,rb,B,JB=kin(q); out=[]
    for sx in (-1,1):
        for sy in (-1,1):
            r=R(q[2])@np.array([sx*D/2, sy*hs/2]); c=S+r
            Jc=np.zeros((2,4)); Jc[:,0]=[1,0]; Jc[:,1]=[0,1]; Jc[:,2]=perp(r)
            if sx>0: out.append((c[0]-rp, Jc[0], Jc[1]))
            else: out.append((-rp-c[0], -Jc[0], Jc[1]))
    rP=R(q[3])@np.array([-dp,hp]); P=B+rP
    Jc=np.zeros((2,4)); Jc[:,0]=[1,0]; Jc[:,1]=[0,1]; Jc[:,2]=perp(rs); Jc[:,3]=perp(rb)+perp(rP)
    out.append((P[0]-rp, Jc[0], Jc[1]))
    return out
def step(q,u,dt):
    qM=q+dt/2*u; M=mass(qM); Mi=np.linalg.inv(M)
    uf=u+dt*Mi@force(qM,u)
    cs_=contacts(qM); act=[k for k,(gp,WN,WT) in enumerate(contacts(q)) if gp+dt*(WN@u)<=0]
    P=np.zeros((5,2)); u1=uf.copy()
    if act:
        Wn=[cs_[k][1] for k in act]; Wt=[cs_[k][2] for k in act]
        for it in range(2000):
            umax=0
            for j,k in enumerate(act):
                WN,WT=Wn[j],Wt[j]
                rN=1/(WN@Mi@WN); rT=1/(WT@Mi@WT)
                gN=WN@u1+e*(WN@u); pn=max(0,P[k,0]-rN*gN); dpn=pn-P[k,0]
                u1=u1+Mi@WN*dpn; P[k,0]=pn
                gT=WT@u1; pt=np.clip(P[k,1]-rT*gT,-mu*P[k,0],mu*P[k,0]); dpt=pt-P[k,1]
                u1=u1+Mi@WT*dpt; P[k,1]=pt
                umax=max(umax,abs(dpn),abs(dpt))
            if umax<1e-13: break
    q1=qM+dt/2*u1
    return q1,u1,P
def run(dt=1e-4,T=1.5,rate0=RATE0):
    q=np.array([0,Y0,0,0.]); u=np.array([0,0,0,rate0])
    ts=[0];Q=[q];U=[u];PP=[np.zeros((5,2))]
    for k in range(int(round(T/dt))):
        q,u,P=step(q,u,dt); ts.append((k+1)*dt); Q.append(q); U.append(u); PP.append(P)
    return np.array(ts),np.array(Q),np.array(U),np.array(PP)


def cycles(t, Q, P, group=5e-3):
    """first picker impact of each group, and the periods and descents between them"""
    pk = np.nonzero(P[:, 4, 0] > 0)[0]
    first = [k for i, k in enumerate(pk) if i == 0 or t[k] - t[pk[i - 1]] > group]
    return t[first], np.diff(t[first]), -np.diff(Q[first, 1])


def main():
    dt = float(sys.argv[1]) if len(sys.argv) > 1 else 1e-4
    T = float(sys.argv[2]) if len(sys.argv) > 2 else 1.0
    t, Q, U, P = run(dt, T)
    ti, per, desc = cycles(t, Q, P)
    print("woodpecker (Moreau-Jean toy, dt = %g, %g s)" % (dt, T))
    print("picker impacts (first of each group) at", " ".join("%.4f" % x for x in ti), "s")
    print("periods", " ".join("%.4f" % x for x in per), "s")
    print("descent per cycle", " ".join("%.2f" % (1e3 * x) for x in desc), "mm")
    print("bird angle relative to the sleeve: %.3f ... %.3f rad; sleeve tilt %.4f ... %.4f rad; "
          "deepest gap %.1e m" % ((Q[:, 3] - Q[:, 2]).min(), (Q[:, 3] - Q[:, 2]).max(),
                                 Q[:, 2].min(), Q[:, 2].max(),
                                 min(min(c[0] for c in contacts(q)) for q in Q[::10])))


if __name__ == "__main__":
    main()
