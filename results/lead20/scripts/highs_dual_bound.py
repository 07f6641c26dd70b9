import highspy, numpy as np
rng=np.random.default_rng(0)
worst=0
for t in range(200):
    n=12; m=8
    c=rng.uniform(1,1+3e-6,n)  # near-tied costs
    A=(rng.random((m,n))<0.4).astype(float)*rng.uniform(0.5,1.5,(m,n))
    for j in range(m):
        if A[j].sum()==0: A[j,0]=1
    h=highspy.Highs(); h.silent()
    h.setOptionValue("mip_rel_gap",0.0)
    lp=highspy.HighsLp(); lp.num_col_=n; lp.num_row_=m
    lp.col_cost_=c; lp.col_lower_=np.zeros(n); lp.col_upper_=np.ones(n)
    lp.row_lower_=np.full(m,2.0); lp.row_upper_=np.full(m,np.inf)
    import scipy.sparse as sp
    M=sp.csc_matrix(A); lp.a_matrix_.format_=highspy.MatrixFormat.kColwise
    lp.a_matrix_.start_=M.indptr; lp.a_matrix_.index_=M.indices; lp.a_matrix_.value_=M.data
    lp.integrality_=[highspy.HighsVarType.kInteger]*n
    h.passModel(lp); h.run(); info=h.getInfo()
    ub=info.objective_function_value; lb=info.mip_dual_bound
    # exact optimum by brute force
    best=np.inf
    for k in range(1<<n):
        x=np.array([(k>>i)&1 for i in range(n)],float)
        if (A@x>=2-1e-9).all(): best=min(best,c@x)
    if lb>best+1e-12: worst=max(worst,lb-best); print(t,"dual bound",lb,"opt",best,"inc",ub)
print("worst overshoot",worst)
