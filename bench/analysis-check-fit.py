#!/usr/bin/env python3
"""analysis-check-fit.py — an independent single-exponential least-squares fit of each load of a recording in tests/data.

Written apart from analysis/ (golden-section search over ln tau, the
linear part by normal equations) to check the daemon's final fits:
compare with `build/bench/analysis-corpus --recording FILE` (its "auto fit"
column when that is exp1) or `heatcurvectl analyse`. Pure Python, slow but small.
Usage: bench/analysis-check-fit.py [tests/data/monipi-rpi4-cooled.csv.gz]   (a .gz is read as such)
"""
import sys
import csv, gzip, math
path=sys.argv[1] if len(sys.argv) > 1 else 'tests/data/monipi-rpi4-cooled.csv.gz'
rows=list(csv.DictReader(gzip.open(path,'rt') if path.endswith('.gz') else open(path)))
def loads():
    segs=[];cur=[]
    for r in rows:
        if r['phase']=='stress': cur.append((float(r['elapsed_s']),float(r['temp_c'])))
        elif cur: segs.append(cur);cur=[]
    return segs
def lin(cols, ys):
    # least squares y = c0 + sum b_k col_k via normal equations (small, gaussian elimination)
    k=len(cols)+1; n=len(ys)
    X=[[1.0]+[c[i] for c in cols] for i in range(n)]
    A=[[sum(X[i][a]*X[i][b] for i in range(n)) for b in range(k)] for a in range(k)]
    v=[sum(X[i][a]*ys[i] for i in range(n)) for a in range(k)]
    for p in range(k):
        m=max(range(p,k),key=lambda r:abs(A[r][p])); A[p],A[m]=A[m],A[p]; v[p],v[m]=v[m],v[p]
        for r in range(p+1,k):
            f=A[r][p]/A[p][p]
            for c in range(p,k): A[r][c]-=f*A[p][c]
            v[r]-=f*v[p]
    x=[0]*k
    for p in reversed(range(k)): x[p]=(v[p]-sum(A[p][c]*x[c] for c in range(p+1,k)))/A[p][p]
    sse=sum((ys[i]-sum(X[i][a]*x[a] for a in range(k)))**2 for i in range(n))
    return sse,x
def golden(f,a,b,it=60):
    g=(math.sqrt(5)-1)/2
    c=b-g*(b-a); d=a+g*(b-a)
    for _ in range(it):
        if f(c)<f(d): b=d
        else: a=c
        c=b-g*(b-a); d=a+g*(b-a)
    return (a+b)/2
for k,seg in enumerate(loads(),1):
    t0=seg[0][0]; ts=[t-t0 for t,_ in seg]; ys=[y for _,y in seg]
    f=lambda u: lin([[math.exp(-t/math.exp(u)) for t in ts]],ys)[0]
    u=golden(f,math.log(1),math.log(20*ts[-1]))
    sse,x=lin([[math.exp(-t/math.exp(u)) for t in ts]],ys)
    print(f"load {k}: independent exp1 plateau {x[0]:.3f} C tau {math.exp(u):.2f} s rms {math.sqrt(sse/len(ys)):.3f}")
