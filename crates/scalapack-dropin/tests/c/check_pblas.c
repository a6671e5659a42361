/*
 * check_pblas.c: ndcyclic's p?tran, p?tranu, p?tranc and p?geadd
 * (ndcyclic_ names) on random sub-matrix cases, compared
 *   (a) with the expected C computed from the indices (the oracle): A's and
 *       C's elements are functions of their global indices, so every rank
 *       knows the expected value of each element it holds;
 *   (b) with ScaLAPACK's routine of the same name (plain name).
 * ScaLAPACK is also compared with the oracle and reported on its own: a
 * disagreement there is printed with the case but does not fail the run
 * (Debian's PBLAS tester reports ScaLAPACK's own PDGEADD failing, so
 * ScaLAPACK is no oracle for geadd). Only ndcyclic-vs-oracle failures (or
 * ndcyclic changing A) make the exit status 1.
 *
 * In the window, values are compared with a relative tolerance (1e-5 for
 * s/c, 1e-12 for d/z, relative to |alpha||a| + |beta||c|); everywhere else
 * in C's local storage (elements outside the window, LLD padding) the
 * value must be bit for bit the one before the call. With beta = 0, C
 * holds NaN before the call: ScaLAPACK's convention is that C is then not
 * read, so the window must come out as alpha*op(A), NaN-free.
 *
 * Build and usage: as check_gemr2d.c (-DSELFTEST points the ndcyclic_
 * calls at ScaLAPACK);
 *   mpirun.mpich -n P check_pblas [--random N] [--seed S] [--verbose]
 */
#include <math.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ndcyclic_scalapack.h"
#include "common.h"


#ifdef SELFTEST
#define ndcyclic_pstran_ pstran_
#define ndcyclic_pdtran_ pdtran_
#define ndcyclic_pctranu_ pctranu_
#define ndcyclic_pztranu_ pztranu_
#define ndcyclic_pctranc_ pctranc_
#define ndcyclic_pztranc_ pztranc_
#define ndcyclic_psgeadd_ psgeadd_
#define ndcyclic_pdgeadd_ pdgeadd_
#define ndcyclic_pcgeadd_ pcgeadd_
#define ndcyclic_pzgeadd_ pzgeadd_
#define ndcyclic_release_plans(c) ((void)(c))
#endif


static int me, nprocs, verbose = 0;

/* ------------------------------------------------------------------ */
/* One grid per case (PBLAS: A and C share the context).               */

static void grid_random(grid_t *g)
{
    int t = 1 + rnd(nprocs), p = random_divisor(t), k, pr, pc;
    g->kind = rnd(3);
    g->nprow = p;
    g->npcol = t / p;
    for (k = 0; k < nprocs; k++)
        g->procs[k] = k;
    Cblacs_get(0, 0, &g->ctxt);
    if (g->kind == G_MAP) {
        int map[MAXP];
        for (k = nprocs - 1; k > 0; k--) {
            int j = rnd(k + 1), tmp = g->procs[k];
            g->procs[k] = g->procs[j];
            g->procs[j] = tmp;
        }
        memcpy(map, g->procs, sizeof(int) * (size_t)t);
        Cblacs_gridmap(&g->ctxt, map, g->nprow, g->nprow, g->npcol);
    } else {
        Cblacs_gridinit(&g->ctxt, g->kind == G_ROWMAJOR ? "R" : "C", g->nprow, g->npcol);
    }
    g->member = 0;
    g->myrow = g->mycol = -1;
    if (g->ctxt >= 0) {
        Cblacs_gridinfo(g->ctxt, &pr, &pc, &g->myrow, &g->mycol);
        g->member = g->myrow >= 0 && g->myrow < pr && g->mycol >= 0 && g->mycol < pc;
    }
    if (!g->member)
        g->ctxt = -1;
}

/* ------------------------------------------------------------------ */
/* Matrices.                                                           */

typedef struct {
    int M, N, MB, NB, RSRC, CSRC, I, J, lldextra;
    const grid_t *g;
    int locr, locc, lld;
    size_t nstore;
    int desc[9];
} mat_t;

static void mat_random(mat_t *a, int rows, int cols, const grid_t *g)
{
    a->g = g;
    a->MB = 1 + rnd(9);
    a->NB = 1 + rnd(9);
    a->I = 1 + (rnd(3) == 0 ? 0 : rnd(12));
    a->J = 1 + (rnd(3) == 0 ? 0 : rnd(12));
    a->M = a->I - 1 + rows + rnd(6);
    a->N = a->J - 1 + cols + rnd(6);
    if (a->M < 1)
        a->M = 1;
    if (a->N < 1)
        a->N = 1;
    a->RSRC = rnd(g->nprow);
    a->CSRC = rnd(g->npcol);
    a->lldextra = rnd(3) == 0 ? 1 + rnd(5) : 0;
    a->locr = a->locc = 0;
    a->lld = 1;
    if (g->member) {
        a->locr = local_count(a->M, a->MB, g->myrow, a->RSRC, g->nprow);
        a->locc = local_count(a->N, a->NB, g->mycol, a->CSRC, g->npcol);
        a->lld = (a->locr > 1 ? a->locr : 1) + a->lldextra;
    }
    a->nstore = (size_t)a->lld * (size_t)a->locc;
    if (a->nstore == 0)
        a->nstore = 1;
    a->desc[0] = 1;
    a->desc[1] = g->ctxt;
    a->desc[2] = a->M;
    a->desc[3] = a->N;
    a->desc[4] = a->MB;
    a->desc[5] = a->NB;
    a->desc[6] = a->RSRC;
    a->desc[7] = a->CSRC;
    a->desc[8] = a->lld;
}

static void mat_global(const mat_t *a, size_t k, int *gi, int *gj)
{
    int li = (int)(k % (size_t)a->lld), lj = (int)(k / (size_t)a->lld);
    if (!a->g->member || li >= a->locr || lj >= a->locc) {
        *gi = *gj = -1;
        return;
    }
    *gi = global_index(li, a->MB, a->g->myrow, a->RSRC, a->g->nprow);
    *gj = global_index(lj, a->NB, a->g->mycol, a->CSRC, a->g->npcol);
}

static void mat_describe(const mat_t *a, char *buf, size_t len)
{
    snprintf(buf, len, "M=%d N=%d MB=%d NB=%d RSRC=%d CSRC=%d I=%d J=%d LLD=locrows+%d", a->M, a->N,
             a->MB, a->NB, a->RSRC, a->CSRC, a->I, a->J, a->lldextra);
}

/* ------------------------------------------------------------------ */
/* Types, values.                                                      */

enum { T_S, T_D, T_C, T_Z };
static const char type_char[] = "sdcz";
static const size_t type_size[] = {sizeof(float), sizeof(double), 2 * sizeof(float), 2 * sizeof(double)};
static int is_complex(int t) { return t == T_C || t == T_Z; }
static int is_single(int t) { return t == T_S || t == T_C; }

static void get(int t, const char *buf, size_t k, double *re, double *im)
{
    switch (t) {
    case T_S: *re = ((const float *)buf)[k]; *im = 0; break;
    case T_D: *re = ((const double *)buf)[k]; *im = 0; break;
    case T_C: *re = ((const float *)buf)[2 * k]; *im = ((const float *)buf)[2 * k + 1]; break;
    case T_Z: *re = ((const double *)buf)[2 * k]; *im = ((const double *)buf)[2 * k + 1]; break;
    }
}

static void put(int t, char *buf, size_t k, double re, double im)
{
    switch (t) {
    case T_S: ((float *)buf)[k] = (float)re; break;
    case T_D: ((double *)buf)[k] = re; break;
    case T_C: ((float *)buf)[2 * k] = (float)re; ((float *)buf)[2 * k + 1] = (float)im; break;
    case T_Z: ((double *)buf)[2 * k] = re; ((double *)buf)[2 * k + 1] = im; break;
    }
}

/* A's and C's elements: functions of the global indices, small (exact in
 * float), distinct for neighbours and for (i, j) against (j, i), with a
 * non-zero imaginary part (so that a conjugation shows). */
static void a_value(int gi, int gj, double *re, double *im)
{
    *re = 1.0 + (double)((61 * gi + 17 * gj) % 97) / 8.0;
    *im = -1.0 - (double)((29 * gi + 43 * gj + 5) % 89) / 8.0;
}

static void c_value(int gi, int gj, double *re, double *im)
{
    *re = 2.0 + (double)((23 * gi + 71 * gj) % 83) / 4.0;
    *im = 0.5 + (double)((37 * gi + 11 * gj + 3) % 79) / 4.0;
}

/* ------------------------------------------------------------------ */
/* Routines.                                                           */

enum { R_TRAN, R_TRANU, R_TRANC, R_GEADD };
static const char *routine_name[] = {"tran", "tranu", "tranc", "geadd"};

typedef struct {
    int routine, type;
    char trans; /* geadd: 'N', 'T', 'C'; the transposes: 'T' or 'C' */
} group_t;

/* ndcyclic_ calls made by this rank, per routine and type (the script
 * compares them with ndcyclic's trace: a call that does not reach
 * ndcyclic shows). */
static long ours_calls[4 * 4];
static const char *entry_name[4 * 4] = {
    "pstran_", "pdtran_", NULL, NULL, NULL, NULL, "pctranu_", "pztranu_",
    NULL, NULL, "pctranc_", "pztranc_", "psgeadd_", "pdgeadd_", "pcgeadd_", "pzgeadd_"};

static void call(int ours, const group_t *gr, int m, int n, const double alpha[2], void *a, int ia,
                 int ja, int *da, const double beta[2], void *c, int ic, int jc, int *dc)
{
    float fal[2] = {(float)alpha[0], (float)alpha[1]}, fbe[2] = {(float)beta[0], (float)beta[1]};
    const void *al = is_single(gr->type) ? (const void *)fal : (const void *)alpha;
    const void *be = is_single(gr->type) ? (const void *)fbe : (const void *)beta;
    char tr = gr->trans;
    ours_calls[gr->routine * 4 + gr->type] += ours;
#define TRAN(name) (ours ? ndcyclic_##name : name)(&m, &n, al, a, &ia, &ja, da, be, c, &ic, &jc, dc)
#define GEADD(name) (ours ? ndcyclic_##name : name)(&tr, &m, &n, al, a, &ia, &ja, da, be, c, &ic, &jc, dc)
    switch (gr->routine * 4 + gr->type) {
    case R_TRAN * 4 + T_S: TRAN(pstran_); break;
    case R_TRAN * 4 + T_D: TRAN(pdtran_); break;
    case R_TRANU * 4 + T_C: TRAN(pctranu_); break;
    case R_TRANU * 4 + T_Z: TRAN(pztranu_); break;
    case R_TRANC * 4 + T_C: TRAN(pctranc_); break;
    case R_TRANC * 4 + T_Z: TRAN(pztranc_); break;
    case R_GEADD * 4 + T_S: GEADD(psgeadd_); break;
    case R_GEADD * 4 + T_D: GEADD(pdgeadd_); break;
    case R_GEADD * 4 + T_C: GEADD(pcgeadd_); break;
    case R_GEADD * 4 + T_Z: GEADD(pzgeadd_); break;
    default:
        fprintf(stderr, "check_pblas: no such routine\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
#undef TRAN
#undef GEADD
}

/* ------------------------------------------------------------------ */
/* One case.                                                           */

enum { E_OURS_ORACLE, E_OURS_SCAL, E_SCAL_ORACLE, E_OURS_A, E_SCAL_A, NERR };

typedef struct {
    int m, n;
    double alpha[2], beta[2];
    mat_t A, C;
    grid_t g;
} case_t;

/* |x| for a (re, im) pair. */
static double mag(double re, double im) { return hypot(re, im); }

/* Whether (re, im) is within tolerance of the expected (er, ei). */
static int close_to(double re, double im, double er, double ei, double tol, double scale)
{
    if (!isfinite(re) || !isfinite(im))
        return 0;
    return mag(re - er, im - ei) <= tol * (scale > 1.0 ? scale : 1.0);
}

static void run_case(const group_t *gr, case_t *cs, const char *label, long err[NERR])
{
    int t = gr->type, transposed = gr->trans != 'N', conj = gr->trans == 'C' && is_complex(t);
    size_t es = type_size[t], k;
    double tol = is_single(t) ? 1e-5 : 1e-12;
    int beta_zero = cs->beta[0] == 0.0 && cs->beta[1] == 0.0;
    char *a = malloc(cs->A.nstore * es), *a1 = malloc(cs->A.nstore * es),
         *a2 = malloc(cs->A.nstore * es), *c0 = malloc(cs->C.nstore * es),
         *c1 = malloc(cs->C.nstore * es), *c2 = malloc(cs->C.nstore * es);
    int shown = 0;
    if (!a || !a1 || !a2 || !c0 || !c1 || !c2) {
        fprintf(stderr, "check_pblas: out of memory\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    /* A: values; LLD padding NaN (never to be read). */
    for (k = 0; k < cs->A.nstore; k++) {
        int gi, gj;
        double re, im;
        mat_global(&cs->A, k, &gi, &gj);
        if (gi >= 0)
            a_value(gi, gj, &re, &im);
        else
            re = im = NAN;
        put(t, a, k, re, im);
    }
    /* C: values, or NaN everywhere when beta = 0; padding -777.25. */
    for (k = 0; k < cs->C.nstore; k++) {
        int gi, gj;
        double re, im;
        mat_global(&cs->C, k, &gi, &gj);
        if (beta_zero)
            re = im = NAN;
        else if (gi >= 0)
            c_value(gi, gj, &re, &im);
        else
            re = im = -777.25;
        put(t, c0, k, re, im);
    }
    memcpy(a1, a, cs->A.nstore * es);
    memcpy(a2, a, cs->A.nstore * es);
    memcpy(c1, c0, cs->C.nstore * es);
    memcpy(c2, c0, cs->C.nstore * es);

    if (cs->g.member) {
        call(0, gr, cs->m, cs->n, cs->alpha, a1, cs->A.I, cs->A.J, cs->A.desc, cs->beta, c1, cs->C.I,
             cs->C.J, cs->C.desc);
        call(1, gr, cs->m, cs->n, cs->alpha, a2, cs->A.I, cs->A.J, cs->A.desc, cs->beta, c2, cs->C.I,
             cs->C.J, cs->C.desc);
    }
    for (k = 0; k < cs->A.nstore; k++) {
        err[E_SCAL_A] += memcmp(a1 + k * es, a + k * es, es) != 0;
        err[E_OURS_A] += memcmp(a2 + k * es, a + k * es, es) != 0;
    }

    for (k = 0; k < cs->C.nstore; k++) {
        int gi, gj, i, j, ok1, ok2, ok12;
        double er, ei, scale = 0, r1, i1, r2, i2;
        mat_global(&cs->C, k, &gi, &gj);
        i = gi - (cs->C.I - 1);
        j = gj - (cs->C.J - 1);
        get(t, c1, k, &r1, &i1);
        get(t, c2, k, &r2, &i2);
        if (gi >= 0 && i >= 0 && i < cs->m && j >= 0 && j < cs->n) {
            /* C(i, j) = beta*C(i, j) + alpha*op(A)(i, j) */
            double ar, ai, cr = 0, ci = 0, opr, opi;
            if (transposed)
                a_value(cs->A.I - 1 + j, cs->A.J - 1 + i, &ar, &ai);
            else
                a_value(cs->A.I - 1 + i, cs->A.J - 1 + j, &ar, &ai);
            if (!is_complex(t))
                ai = 0;
            if (conj)
                ai = -ai;
            /* the inputs as the routine sees them (rounded to the type;
             * exact here, the values being multiples of 1/8) */
            if (is_single(t)) {
                ar = (float)ar;
                ai = (float)ai;
            }
            opr = cs->alpha[0] * ar - cs->alpha[1] * ai;
            opi = cs->alpha[0] * ai + cs->alpha[1] * ar;
            scale = mag(cs->alpha[0], cs->alpha[1]) * mag(ar, ai);
            er = opr;
            ei = opi;
            if (!beta_zero) {
                c_value(gi, gj, &cr, &ci);
                if (!is_complex(t))
                    ci = 0;
                if (is_single(t)) {
                    cr = (float)cr;
                    ci = (float)ci;
                }
                er += cs->beta[0] * cr - cs->beta[1] * ci;
                ei += cs->beta[0] * ci + cs->beta[1] * cr;
                scale += mag(cs->beta[0], cs->beta[1]) * mag(cr, ci);
            }
            ok1 = close_to(r1, i1, er, ei, tol, scale);
            ok2 = close_to(r2, i2, er, ei, tol, scale);
            ok12 = close_to(r2, i2, r1, i1, tol, scale);
        } else {
            /* untouched: bit for bit as before */
            ok1 = memcmp(c1 + k * es, c0 + k * es, es) == 0;
            ok2 = memcmp(c2 + k * es, c0 + k * es, es) == 0;
            ok12 = memcmp(c1 + k * es, c2 + k * es, es) == 0;
            get(t, c0, k, &er, &ei);
        }
        err[E_SCAL_ORACLE] += !ok1;
        err[E_OURS_ORACLE] += !ok2;
        err[E_OURS_SCAL] += !ok12;
        if ((!ok1 || !ok2) && shown < (verbose ? 50 : 3)) {
            printf("  rank %d %s: C local (%d,%d) = global (%d,%d)%s: scalapack (%.17g,%.17g) "
                   "ndcyclic (%.17g,%.17g) expected (%.17g,%.17g)\n",
                   me, label, (int)(k % (size_t)cs->C.lld), (int)(k / (size_t)cs->C.lld), gi, gj,
                   (gi >= 0 && i >= 0 && i < cs->m && j >= 0 && j < cs->n) ? "" : " (outside the window)",
                   r1, i1, r2, i2, er, ei);
            shown++;
        }
    }
    free(a);
    free(a1);
    free(a2);
    free(c0);
    free(c1);
    free(c2);
}

static const double real_alphas[][2] = {{0, 0}, {1, 0}, {-1, 0}, {0.5, 0}, {-2.25, 0}, {3, 0}};
static const double real_betas[][2] = {{0, 0}, {1, 0}, {-1, 0}, {0.75, 0}, {2, 0}};
static const double cplx_alphas[][2] = {{0, 0}, {1, 0}, {0, 1}, {0.5, -1.25}, {-2, 0.75}};
static const double cplx_betas[][2] = {{0, 0}, {1, 0}, {0.75, 0.5}, {-1, 2}, {0, -0.5}};

/* ------------------------------------------------------------------ */

int main(int argc, char **argv)
{
    int nrandom = 24, i, gi, k, failures = 0, scal_disagree = 0;
    uint64_t seed = 20240612;
    group_t groups[32];
    int ngroups = 0, t, tr;
    const char *trs = "NTC";
    double t0;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    setvbuf(stdout, NULL, _IOLBF, 0);
    for (i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--random") && i + 1 < argc) nrandom = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--seed") && i + 1 < argc) seed = strtoull(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "--verbose")) verbose = 1;
        else {
            if (me == 0)
                fprintf(stderr, "usage: check_pblas [--random N] [--seed S] [--verbose]\n");
            MPI_Finalize();
            return 2;
        }
    }
    if (nprocs > MAXP) {
        if (me == 0) fprintf(stderr, "check_pblas: at most %d processes\n", MAXP);
        MPI_Finalize();
        return 2;
    }
    groups[ngroups++] = (group_t){R_TRAN, T_S, 'T'};
    groups[ngroups++] = (group_t){R_TRAN, T_D, 'T'};
    groups[ngroups++] = (group_t){R_TRANU, T_C, 'T'};
    groups[ngroups++] = (group_t){R_TRANU, T_Z, 'T'};
    groups[ngroups++] = (group_t){R_TRANC, T_C, 'C'};
    groups[ngroups++] = (group_t){R_TRANC, T_Z, 'C'};
    for (t = T_S; t <= T_Z; t++)
        for (tr = 0; tr < 3; tr++)
            groups[ngroups++] = (group_t){R_GEADD, t, trs[tr]};
    if (me == 0) {
#ifdef SELFTEST
        printf("check_pblas: SELFTEST build: the ndcyclic_ calls go to ScaLAPACK\n");
#endif
        printf("check_pblas: %d processes, %d random cases per routine/type/trans, seed %llu\n", nprocs,
               nrandom, (unsigned long long)seed);
    }
    t0 = MPI_Wtime();

    for (gi = 0; gi < ngroups; gi++) {
        const group_t *gr = &groups[gi];
        int ok[3] = {0, 0, 0};
        char name[32];
        if (gr->routine == R_GEADD)
            snprintf(name, sizeof name, "geadd %c %c", type_char[gr->type], gr->trans);
        else
            snprintf(name, sizeof name, "%s %c", routine_name[gr->routine], type_char[gr->type]);
        rng_state = seed * 1000003ULL + (uint64_t)gi;
        for (k = 0; k < nrandom; k++) {
            case_t cs;
            long err[NERR] = {0}, sum[NERR];
            char label[96];
            int cplx = is_complex(gr->type), ai, bi;
            memset(&cs, 0, sizeof cs);
            grid_random(&cs.g);
            cs.m = rnd(12) == 0 ? 0 : 1 + rnd(40);
            cs.n = rnd(12) == 0 ? 0 : 1 + rnd(40);
            if (gr->trans == 'N')
                mat_random(&cs.A, cs.m, cs.n, &cs.g);
            else
                mat_random(&cs.A, cs.n, cs.m, &cs.g);
            mat_random(&cs.C, cs.m, cs.n, &cs.g);
            /* alpha: 0 one case in 10; beta: 0 (NaN in C) one in 4 */
            ai = rnd(10) == 0 ? 0 : 1 + rnd(cplx ? 4 : 5);
            bi = rnd(4) == 0 ? 0 : 1 + rnd(4);
            memcpy(cs.alpha, cplx ? cplx_alphas[ai] : real_alphas[ai], sizeof cs.alpha);
            memcpy(cs.beta, cplx ? cplx_betas[bi] : real_betas[bi], sizeof cs.beta);
            snprintf(label, sizeof label, "%s case %d", name, k + 1);

            run_case(gr, &cs, label, err);
            MPI_Allreduce(err, sum, NERR, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
            ok[0] += sum[E_OURS_ORACLE] == 0 && sum[E_OURS_A] == 0;
            ok[1] += sum[E_OURS_SCAL] == 0;
            ok[2] += sum[E_SCAL_ORACLE] == 0 && sum[E_SCAL_A] == 0;
            if (me == 0 && (sum[E_OURS_ORACLE] || sum[E_OURS_A] || sum[E_OURS_SCAL] ||
                            sum[E_SCAL_ORACLE] || sum[E_SCAL_A] || verbose)) {
                char ad[160], cd[160], gd[MAXP * 4 + 32];
                mat_describe(&cs.A, ad, sizeof ad);
                mat_describe(&cs.C, cd, sizeof cd);
                grid_describe(&cs.g, gd, sizeof gd);
                printf("%s %s (seed %llu): m=%d n=%d alpha=(%g,%g) beta=(%g,%g)%s grid %s\n"
                       "    A: %s\n    C: %s\n"
                       "    elements: ndcyclic!=expected %ld, ndcyclic!=scalapack %ld, "
                       "scalapack!=expected %ld; A changed by ndcyclic %ld, by scalapack %ld\n",
                       sum[E_OURS_ORACLE] || sum[E_OURS_A] ? "MISMATCH" :
                       sum[E_SCAL_ORACLE] || sum[E_SCAL_A] ? "SCALAPACK-DISAGREES" :
                       sum[E_OURS_SCAL] ? "DIFFERS-FROM-SCALAPACK" : "ok",
                       label, (unsigned long long)seed, cs.m, cs.n, cs.alpha[0], cs.alpha[1], cs.beta[0],
                       cs.beta[1], cs.beta[0] == 0 && cs.beta[1] == 0 ? " (C was NaN)" : "", gd, ad, cd,
                       sum[E_OURS_ORACLE], sum[E_OURS_SCAL], sum[E_SCAL_ORACLE], sum[E_OURS_A],
                       sum[E_SCAL_A]);
                if ((sum[E_SCAL_ORACLE] || sum[E_SCAL_A]) && !sum[E_OURS_ORACLE] && !sum[E_OURS_A])
                    printf("    ScaLAPACK disagrees with the oracle here; ndcyclic agrees with it "
                           "(not counted as a failure)\n");
            }
            fflush(stdout);
            grid_free(&cs.g, 1);
        }
        if (me == 0) {
            printf("%-11s ndcyclic vs oracle %d/%d, ndcyclic vs ScaLAPACK %d/%d, ScaLAPACK vs oracle %d/%d%s\n",
                   name, ok[0], nrandom, ok[1], nrandom, ok[2], nrandom,
                   ok[0] < nrandom ? "  FAILED" : ok[2] < nrandom ? "  (ScaLAPACK disagrees with the oracle)" : "");
            failures += nrandom - ok[0];
            scal_disagree += nrandom - ok[2];
        }
    }
    if (me == 0)
        printf("check_pblas: %d processes: %s; ScaLAPACK disagreed with the oracle in %d case(s) [%.1f s]\n",
               nprocs, failures ? "FAILED" : "ndcyclic agrees with the oracle everywhere", scal_disagree,
               MPI_Wtime() - t0);
    {
        long total[16];
        MPI_Reduce(ours_calls, total, 16, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
        if (me == 0) {
            printf("ndcyclic_calls (summed over ranks):");
            for (i = 0; i < 16; i++)
                if (entry_name[i])
                    printf(" %s=%ld", entry_name[i], total[i]);
            printf("\n");
        }
    }
    MPI_Bcast(&failures, 1, MPI_INT, 0, MPI_COMM_WORLD);
    ndcyclic_release_plans(-1);
    Cblacs_exit(1);
    MPI_Finalize();
    return failures ? 1 : 0;
}
