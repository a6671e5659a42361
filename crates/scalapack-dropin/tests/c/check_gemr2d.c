/*
 * check_gemr2d.c: ndcyclic's Cp?gemr2d (ndcyclic_Cp?gemr2d) against
 * ScaLAPACK's Cp?gemr2d, element by element, for the element types
 * s, d, c, z, i.
 *
 * Cases: every line of ScaLAPACK's REDIST/TESTING/GEMR2D.dat whose grids fit
 * in the processes running (the others are skipped and counted), then
 * random sub-matrix cases from a fixed seed. For each case and type, A's
 * local part holds values that name their global element, B's whole local
 * storage (LLD padding rows included) a sentinel; ScaLAPACK copies into B1,
 * ndcyclic into B2, and every element of the local storage is compared:
 * B1 with B2, and each with the value computed from the indices (the
 * window's elements come from A, everything else keeps the sentinel).
 * A must come back unchanged. Counts are summed over all ranks.
 *
 * Last, "context reuse" cases (2 processes or more): one call repeated
 * with the same integers everywhere (descriptors, context numbers: BLACS
 * hands the freed numbers out again) while B's grid maps the processes
 * differently each time; a plan cached for the first mapping must not
 * serve the next. Contexts are released with ndcyclic_release_plans
 * before Cblacs_gridexit (this program links ScaLAPACK's BLACS first, so
 * ndcyclic does not see the gridexit), unless --no-release.
 *
 * Build: mpicc.mpich -I crates/scalapack-dropin/include check_gemr2d.c
 *          -lscalapack-mpich -L target/release -lndcyclic_scalapack
 * (that order: plain names resolve to ScaLAPACK, ndcyclic_ names to ours).
 * With -DSELFTEST the ndcyclic_ calls go to ScaLAPACK, which checks this
 * program's oracle against ScaLAPACK alone.
 *
 * Usage: mpirun.mpich -n P check_gemr2d [--dat FILE | --no-dat] [--random N]
 *          [--reuse N] [--seed S] [--types sdczi]
 *          [--nonmember-desc full|ctxt|mixed] [--no-release] [--verbose]
 * Exit status 1 on any disagreement (on every rank), 0 otherwise.
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ndcyclic_scalapack.h"
#include "common.h"


#ifdef SELFTEST
/* ScaLAPACK on both sides: checks the oracle of this program alone. */
#define ndcyclic_Cpsgemr2d Cpsgemr2d
#define ndcyclic_Cpdgemr2d Cpdgemr2d
#define ndcyclic_Cpcgemr2d Cpcgemr2d
#define ndcyclic_Cpzgemr2d Cpzgemr2d
#define ndcyclic_Cpigemr2d Cpigemr2d
#define ndcyclic_release_plans(c) ((void)(c))
#endif

#define NCOLS 22 /* integers per GEMR2D.dat line */

static int me, nprocs;
static int verbose = 0;

/* ------------------------------------------------------------------ */
/* Grids.                                                              */

/* Collective over all processes. */
static void grid_make(grid_t *g, int kind, int p, int q, const int *procs)
{
    int pr, pc;
    g->kind = kind;
    g->nprow = p;
    g->npcol = q;
    Cblacs_get(0, 0, &g->ctxt);
    if (kind == G_MAP) {
        int map[MAXP];
        memcpy(map, procs, sizeof(int) * (size_t)(p * q));
        memcpy(g->procs, procs, sizeof(int) * (size_t)(p * q));
        Cblacs_gridmap(&g->ctxt, map, p, p, q);
    } else {
        Cblacs_gridinit(&g->ctxt, kind == G_ROWMAJOR ? "R" : "C", p, q);
    }
    g->myrow = g->mycol = -1;
    g->member = 0;
    if (g->ctxt >= 0) {
        Cblacs_gridinfo(g->ctxt, &pr, &pc, &g->myrow, &g->mycol);
        g->member = g->myrow >= 0 && g->myrow < pr && g->mycol >= 0 && g->mycol < pc;
    }
    if (!g->member) {
        g->ctxt = -1;
        g->myrow = g->mycol = -1;
    }
}

/* ------------------------------------------------------------------ */
/* Matrices.                                                           */

typedef struct {
    int M, N, MB, NB, RSRC, CSRC, I, J; /* I, J: 1-based window origin */
    int lldextra;                      /* LLD beyond the local rows */
    int nonmember_ctxt_only;           /* outside the grid: only CTXT = -1 set */
    const grid_t *g;
    int locr, locc, lld;
    size_t nstore; /* elements of local storage (>= 1) */
    int desc[9];
} mat_t;

static void mat_setup(mat_t *a, const grid_t *g)
{
    a->g = g;
    if (g->member) {
        a->locr = local_count(a->M, a->MB, g->myrow, a->RSRC, g->nprow);
        a->locc = local_count(a->N, a->NB, g->mycol, a->CSRC, g->npcol);
        a->lld = (a->locr > 1 ? a->locr : 1) + a->lldextra;
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
    } else {
        a->locr = a->locc = 0;
        a->lld = 1;
        a->nstore = 1;
        if (a->nonmember_ctxt_only) {
            memset(a->desc, 0, sizeof a->desc);
            a->desc[0] = 1;
            a->desc[1] = -1;
        } else {
            a->desc[0] = 1;
            a->desc[1] = -1;
            a->desc[2] = a->M;
            a->desc[3] = a->N;
            a->desc[4] = a->MB;
            a->desc[5] = a->NB;
            a->desc[6] = a->RSRC;
            a->desc[7] = a->CSRC;
            a->desc[8] = 1;
        }
    }
}

/* Global (0-based) row and column of local storage position k, or -1
 * (LLD padding, or outside the grid). */
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
    char gd[MAXP * 4 + 32];
    grid_describe(a->g, gd, sizeof gd);
    snprintf(buf, len, "M=%d N=%d MB=%d NB=%d RSRC=%d CSRC=%d I=%d J=%d LLD=locrows+%d%s on %s",
             a->M, a->N, a->MB, a->NB, a->RSRC, a->CSRC, a->I, a->J,
             a->lldextra, a->nonmember_ctxt_only ? " (outsiders: CTXT only)" : "", gd);
}

/* ------------------------------------------------------------------ */
/* Element types.                                                      */

enum { T_S, T_D, T_C, T_Z, T_I, NTYPES };
static const char type_char[NTYPES] = {'s', 'd', 'c', 'z', 'i'};
static const size_t type_size[NTYPES] = {sizeof(float), sizeof(double), 2 * sizeof(float),
                                         2 * sizeof(double), sizeof(int)};

/* The value of A's global element (gi, gj): exact in every type for
 * gi, gj < 2047 (float: below 2^24). */
static void value_of(int t, void *dst, int gi, int gj)
{
    double key = (double)(gi + 1) * 2048.0 + (double)(gj + 1);
    switch (t) {
    case T_S: *(float *)dst = (float)key; break;
    case T_D: *(double *)dst = key + 0.125; break;
    case T_C: ((float *)dst)[0] = (float)(gi + 1) + 0.5f; ((float *)dst)[1] = -(float)(gj + 1); break;
    case T_Z: ((double *)dst)[0] = key; ((double *)dst)[1] = -(double)(gi + 1) - 0.25; break;
    case T_I: *(int *)dst = (int)key; break;
    }
}

static void sentinel_of(int t, void *dst)
{
    switch (t) {
    case T_S: *(float *)dst = -999.75f; break;
    case T_D: *(double *)dst = -999.75; break;
    case T_C: ((float *)dst)[0] = -999.75f; ((float *)dst)[1] = 31.5f; break;
    case T_Z: ((double *)dst)[0] = -999.75; ((double *)dst)[1] = 31.5; break;
    case T_I: *(int *)dst = -999; break;
    }
}

static void show(int t, const void *p, char *buf, size_t len)
{
    switch (t) {
    case T_S: snprintf(buf, len, "%.9g", *(const float *)p); break;
    case T_D: snprintf(buf, len, "%.17g", *(const double *)p); break;
    case T_C: snprintf(buf, len, "(%.9g,%.9g)", ((const float *)p)[0], ((const float *)p)[1]); break;
    case T_Z: snprintf(buf, len, "(%.17g,%.17g)", ((const double *)p)[0], ((const double *)p)[1]); break;
    case T_I: snprintf(buf, len, "%d", *(const int *)p); break;
    }
}

/* ndcyclic_ calls made by this rank, per type (the script compares them
 * with ndcyclic's trace: a call that does not reach ndcyclic shows). */
static long ours_calls[NTYPES];

static void gemr2d(int ours, int t, int m, int n, void *a, int ia, int ja, int *desca,
                   void *b, int ib, int jb, int *descb, int ictxt)
{
    ours_calls[t] += ours;
    switch (t) {
    case T_S:
        if (ours) ndcyclic_Cpsgemr2d(m, n, (float *)a, ia, ja, desca, (float *)b, ib, jb, descb, ictxt);
        else Cpsgemr2d(m, n, (float *)a, ia, ja, desca, (float *)b, ib, jb, descb, ictxt);
        break;
    case T_D:
        if (ours) ndcyclic_Cpdgemr2d(m, n, (double *)a, ia, ja, desca, (double *)b, ib, jb, descb, ictxt);
        else Cpdgemr2d(m, n, (double *)a, ia, ja, desca, (double *)b, ib, jb, descb, ictxt);
        break;
    case T_C:
        if (ours) ndcyclic_Cpcgemr2d(m, n, a, ia, ja, desca, b, ib, jb, descb, ictxt);
        else Cpcgemr2d(m, n, a, ia, ja, desca, b, ib, jb, descb, ictxt);
        break;
    case T_Z:
        if (ours) ndcyclic_Cpzgemr2d(m, n, a, ia, ja, desca, b, ib, jb, descb, ictxt);
        else Cpzgemr2d(m, n, a, ia, ja, desca, b, ib, jb, descb, ictxt);
        break;
    case T_I:
        if (ours) ndcyclic_Cpigemr2d(m, n, (int *)a, ia, ja, desca, (int *)b, ib, jb, descb, ictxt);
        else Cpigemr2d(m, n, (int *)a, ia, ja, desca, (int *)b, ib, jb, descb, ictxt);
        break;
    }
}

/* ------------------------------------------------------------------ */
/* One case.                                                           */

typedef struct {
    int m, n;
    mat_t A, B;
    int gctx;
    char gdesc[MAXP * 4 + 32];
} case_t;

enum { E_OURS_SCAL, E_SCAL_ORACLE, E_OURS_ORACLE, E_A_CHANGED, NERR };

static void fill_a(int t, const mat_t *a, char *buf)
{
    size_t es = type_size[t], k;
    for (k = 0; k < a->nstore; k++) {
        int gi, gj;
        mat_global(a, k, &gi, &gj);
        if (gi >= 0)
            value_of(t, buf + k * es, gi, gj);
        else
            sentinel_of(t, buf + k * es);
    }
}

/* Runs both implementations; adds this rank's error counts to err. */
static void run_case(int t, case_t *c, const char *label, long err[NERR])
{
    size_t es = type_size[t], k;
    char *a = malloc(c->A.nstore * es), *a0 = malloc(c->A.nstore * es);
    char *b1 = malloc(c->B.nstore * es), *b2 = malloc(c->B.nstore * es);
    char *want = malloc(es);
    int shown = 0;
    if (!a || !a0 || !b1 || !b2 || !want) {
        fprintf(stderr, "check_gemr2d: out of memory\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    fill_a(t, &c->A, a);
    memcpy(a0, a, c->A.nstore * es);
    for (k = 0; k < c->B.nstore; k++) {
        sentinel_of(t, b1 + k * es);
        sentinel_of(t, b2 + k * es);
    }

    gemr2d(0, t, c->m, c->n, a, c->A.I, c->A.J, c->A.desc, b1, c->B.I, c->B.J, c->B.desc, c->gctx);
    gemr2d(1, t, c->m, c->n, a, c->A.I, c->A.J, c->A.desc, b2, c->B.I, c->B.J, c->B.desc, c->gctx);

    if (memcmp(a, a0, c->A.nstore * es) != 0)
        for (k = 0; k < c->A.nstore; k++)
            if (memcmp(a + k * es, a0 + k * es, es) != 0)
                err[E_A_CHANGED]++;

    for (k = 0; k < c->B.nstore; k++) {
        int gi, gj, bad1, bad2, bad12;
        const char *p1 = b1 + k * es, *p2 = b2 + k * es;
        mat_global(&c->B, k, &gi, &gj);
        if (gi >= 0 && gi >= c->B.I - 1 && gi < c->B.I - 1 + c->m && gj >= c->B.J - 1 &&
            gj < c->B.J - 1 + c->n)
            value_of(t, want, gi - (c->B.I - 1) + (c->A.I - 1), gj - (c->B.J - 1) + (c->A.J - 1));
        else
            sentinel_of(t, want);
        bad12 = memcmp(p1, p2, es) != 0;
        bad1 = memcmp(p1, want, es) != 0;
        bad2 = memcmp(p2, want, es) != 0;
        err[E_OURS_SCAL] += bad12;
        err[E_SCAL_ORACLE] += bad1;
        err[E_OURS_ORACLE] += bad2;
        if ((bad12 || bad1 || bad2) && shown < (verbose ? 50 : 4)) {
            char s1[80], s2[80], sw[80];
            show(t, p1, s1, sizeof s1);
            show(t, p2, s2, sizeof s2);
            show(t, want, sw, sizeof sw);
            printf("  rank %d %s: B local (%d,%d) = global (%d,%d): scalapack %s ndcyclic %s expected %s\n",
                   me, label, (int)(k % (size_t)c->B.lld), (int)(k / (size_t)c->B.lld), gi, gj,
                   s1, s2, sw);
            shown++;
        }
    }
    free(a);
    free(a0);
    free(b1);
    free(b2);
    free(want);
}

/* Runs case c for type t, agrees on the result; returns 1 if it passed. */
static int check_case(int t, case_t *c, const char *label)
{
    long err[NERR] = {0}, sum[NERR];
    char ad[MAXP * 4 + 160], bd[MAXP * 4 + 160];
    run_case(t, c, label, err);
    MPI_Allreduce(err, sum, NERR, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    if (sum[0] || sum[1] || sum[2] || sum[3]) {
        if (me == 0) {
            mat_describe(&c->A, ad, sizeof ad);
            mat_describe(&c->B, bd, sizeof bd);
            printf("MISMATCH gemr2d %c %s: m=%d n=%d\n    A: %s\n    B: %s\n    global context %s\n"
                   "    elements: ndcyclic!=scalapack %ld, scalapack!=expected %ld, "
                   "ndcyclic!=expected %ld, A changed %ld\n",
                   type_char[t], label, c->m, c->n, ad, bd, c->gdesc, sum[0], sum[1], sum[2], sum[3]);
        }
        fflush(stdout);
        return 0;
    }
    if (verbose && me == 0)
        printf("ok gemr2d %c %s\n", type_char[t], label);
    return 1;
}

/* ------------------------------------------------------------------ */
/* GEMR2D.dat                                                          */

/* Rank 0 reads the file; every rank gets the cases. Returns the count. */
static int read_dat(const char *path, int **cases)
{
    int count = 0, k, c;
    int *v = NULL;
    if (me == 0) {
        FILE *f = fopen(path, "r");
        char line[512];
        int have_count = 0;
        if (!f) {
            fprintf(stderr, "check_gemr2d: cannot open %s\n", path);
            count = -1;
        } else {
            k = 0;
            while (count >= 0 && fgets(line, sizeof line, f)) {
                char *p = line, *end;
                if (line[0] == '#')
                    continue;
                if (!have_count) {
                    count = (int)strtol(p, &end, 10);
                    if (end == p || count < 0) {
                        count = -1;
                        break;
                    }
                    have_count = 1;
                    v = malloc(sizeof(int) * NCOLS * (size_t)(count ? count : 1));
                    continue;
                }
                if (k >= count)
                    break;
                for (c = 0; c < NCOLS; c++) {
                    v[k * NCOLS + c] = (int)strtol(p, &end, 10);
                    if (end == p) {
                        fprintf(stderr, "check_gemr2d: %s: case %d: fewer than %d integers\n", path,
                                k + 1, NCOLS);
                        count = -1;
                        break;
                    }
                    p = end;
                }
                k++;
            }
            if (count >= 0 && k < count) {
                fprintf(stderr, "check_gemr2d: %s: %d cases announced, %d read\n", path, count, k);
                count = -1;
            }
            fclose(f);
        }
    }
    MPI_Bcast(&count, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (count < 0)
        return -1;
    if (me != 0)
        v = malloc(sizeof(int) * NCOLS * (size_t)(count ? count : 1));
    if (count > 0)
        MPI_Bcast(v, NCOLS * count, MPI_INT, 0, MPI_COMM_WORLD);
    *cases = v;
    return count;
}

/* ------------------------------------------------------------------ */
/* Random cases.                                                       */

static void random_grid(grid_t *g)
{
    int t = 1 + rnd(nprocs), p = random_divisor(t), kind, perm[MAXP], k;
    kind = rnd(3);
    for (k = 0; k < nprocs; k++)
        perm[k] = k;
    if (kind == G_MAP)
        for (k = nprocs - 1; k > 0; k--) {
            int j = rnd(k + 1), tmp = perm[k];
            perm[k] = perm[j];
            perm[j] = tmp;
        }
    grid_make(g, kind, p, t / p, perm);
}

static void random_mat(mat_t *a, int rows, int cols, const grid_t *g, int nonmember_mode)
{
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
    a->nonmember_ctxt_only = nonmember_mode == 2 ? rnd(2) : nonmember_mode;
    mat_setup(a, g);
}

/* ------------------------------------------------------------------ */

static void usage(void)
{
    if (me == 0)
        fprintf(stderr, "usage: check_gemr2d [--dat FILE | --no-dat] [--random N] [--reuse N] [--seed S]\n"
                        "                    [--types sdczi] [--nonmember-desc full|ctxt|mixed]\n"
                        "                    [--no-release] [--verbose]\n");
}

int main(int argc, char **argv)
{
    const char *dat = "GEMR2D.dat", *types = "sdczi";
    int nreuse = 6, reuse_run[NTYPES] = {0}, reuse_ok[NTYPES] = {0};
    int nrandom = 40, release = 1, nonmember_mode = 2, ncases, *cases = NULL, k, t, ti, i;
    uint64_t seed = 20240611;
    int dat_run[NTYPES] = {0}, dat_ok[NTYPES] = {0}, rnd_run[NTYPES] = {0}, rnd_ok[NTYPES] = {0};
    int dat_skipped = 0, failures = 0, gctx;
    double t0;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    setvbuf(stdout, NULL, _IOLBF, 0);
    for (i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--dat") && i + 1 < argc) dat = argv[++i];
        else if (!strcmp(argv[i], "--no-dat")) dat = NULL;
        else if (!strcmp(argv[i], "--reuse") && i + 1 < argc) nreuse = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--random") && i + 1 < argc) nrandom = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--seed") && i + 1 < argc) seed = strtoull(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "--types") && i + 1 < argc) types = argv[++i];
        else if (!strcmp(argv[i], "--no-release")) release = 0;
        else if (!strcmp(argv[i], "--verbose")) verbose = 1;
        else if (!strcmp(argv[i], "--nonmember-desc") && i + 1 < argc) {
            i++;
            nonmember_mode = !strcmp(argv[i], "full") ? 0 : !strcmp(argv[i], "ctxt") ? 1 : 2;
        } else {
            usage();
            MPI_Finalize();
            return 2;
        }
    }
    if (nprocs > MAXP) {
        if (me == 0) fprintf(stderr, "check_gemr2d: at most %d processes\n", MAXP);
        MPI_Finalize();
        return 2;
    }
    if (me == 0) {
#ifdef SELFTEST
        printf("check_gemr2d: SELFTEST build: the ndcyclic_ calls go to ScaLAPACK\n");
#endif
        printf("check_gemr2d: %d processes, types %s, %d random cases per type, seed %llu%s\n", nprocs,
               types, nrandom, (unsigned long long)seed, release ? "" : ", plans not released");
    }
    t0 = MPI_Wtime();

    ncases = dat ? read_dat(dat, &cases) : 0;
    if (ncases < 0) {
        MPI_Finalize();
        return 2;
    }

    /* The tester's global context: every process, nprocs x 1. */
    Cblacs_get(0, 0, &gctx);
    Cblacs_gridinit(&gctx, "R", nprocs, 1);

    for (k = 0; k < ncases; k++) {
        const int *v = cases + k * NCOLS;
        /* m n | M N RSRC CSRC I J P Q MB NB (A) | the same for B */
        case_t c;
        grid_t ga, gb;
        char label[64];
        if (v[8] * v[9] > nprocs || v[18] * v[19] > nprocs) {
            dat_skipped++;
            if (me == 0)
                printf("skip GEMR2D.dat case %d: grids %dx%d -> %dx%d need %d processes, %d running\n",
                       k + 1, v[8], v[9], v[18], v[19],
                       v[8] * v[9] > v[18] * v[19] ? v[8] * v[9] : v[18] * v[19], nprocs);
            continue;
        }
        memset(&c, 0, sizeof c);
        grid_make(&ga, G_ROWMAJOR, v[8], v[9], NULL);
        grid_make(&gb, G_ROWMAJOR, v[18], v[19], NULL);
        c.m = v[0];
        c.n = v[1];
        c.A.M = v[2]; c.A.N = v[3]; c.A.RSRC = v[4]; c.A.CSRC = v[5]; c.A.I = v[6]; c.A.J = v[7];
        c.A.MB = v[10]; c.A.NB = v[11];
        c.B.M = v[12]; c.B.N = v[13]; c.B.RSRC = v[14]; c.B.CSRC = v[15]; c.B.I = v[16]; c.B.J = v[17];
        c.B.MB = v[20]; c.B.NB = v[21];
        mat_setup(&c.A, &ga);
        mat_setup(&c.B, &gb);
        c.gctx = gctx;
        snprintf(c.gdesc, sizeof c.gdesc, "%dx1(R)", nprocs);
        snprintf(label, sizeof label, "GEMR2D.dat case %d", k + 1);
        for (ti = 0; types[ti]; ti++) {
            for (t = 0; t < NTYPES && type_char[t] != types[ti]; t++)
                ;
            if (t == NTYPES)
                continue;
            dat_run[t]++;
            dat_ok[t] += check_case(t, &c, label);
        }
        grid_free(&ga, release);
        grid_free(&gb, release);
    }
    if (me == 0 && ncases)
        printf("GEMR2D.dat: %d of %d cases run, %d skipped (grids larger than %d processes) [%.1f s]\n",
               ncases - dat_skipped, ncases, dat_skipped, nprocs, MPI_Wtime() - t0);

    for (ti = 0; types[ti]; ti++) {
        for (t = 0; t < NTYPES && type_char[t] != types[ti]; t++)
            ;
        if (t == NTYPES)
            continue;
        rng_state = seed * 1000003ULL + (uint64_t)t;
        for (k = 0; k < nrandom; k++) {
            case_t c;
            grid_t ga, gb, gg;
            char label[64];
            int shape = rnd(3), perm[MAXP], j;
            memset(&c, 0, sizeof c);
            /* Global context: every process, as P x 1, 1 x P, or a
             * permuted map of another shape. */
            if (shape == 2) {
                int p = random_divisor(nprocs);
                for (j = 0; j < nprocs; j++)
                    perm[j] = j;
                for (j = nprocs - 1; j > 0; j--) {
                    int r = rnd(j + 1), tmp = perm[j];
                    perm[j] = perm[r];
                    perm[r] = tmp;
                }
                grid_make(&gg, G_MAP, p, nprocs / p, perm);
            } else {
                grid_make(&gg, G_ROWMAJOR, shape == 0 ? nprocs : 1, shape == 0 ? 1 : nprocs, NULL);
            }
            random_grid(&ga);
            random_grid(&gb);
            c.m = rnd(8) == 0 ? 0 : 1 + rnd(60);
            c.n = rnd(8) == 0 ? 0 : 1 + rnd(60);
            random_mat(&c.A, c.m, c.n, &ga, nonmember_mode);
            random_mat(&c.B, c.m, c.n, &gb, nonmember_mode);
            c.gctx = gg.ctxt;
            grid_describe(&gg, c.gdesc, sizeof c.gdesc);
            snprintf(label, sizeof label, "random case %d (seed %llu)", k + 1, (unsigned long long)seed);
            rnd_run[t]++;
            rnd_ok[t] += check_case(t, &c, label);
            grid_free(&ga, release);
            grid_free(&gb, release);
            grid_free(&gg, release);
        }
    }

    /* Context reuse: the same call, B's grid remapped each time. */
    for (ti = 0; nprocs > 1 && types[ti]; ti++) {
        for (t = 0; t < NTYPES && type_char[t] != types[ti]; t++)
            ;
        if (t == NTYPES)
            continue;
        for (k = 0; k < nreuse; k++) {
            case_t c;
            grid_t ga, gb, gg;
            char label[64];
            int map[MAXP], j;
            memset(&c, 0, sizeof c);
            /* B on every process, rotated by k (reversed on odd k) */
            for (j = 0; j < nprocs; j++)
                map[j] = k % 2 ? (nprocs - 1 - j + k) % nprocs : (j + k) % nprocs;
            grid_make(&gg, G_ROWMAJOR, 1, nprocs, NULL);
            grid_make(&ga, G_ROWMAJOR, 1, nprocs, NULL);
            grid_make(&gb, G_MAP, nprocs, 1, map);
            c.m = 23;
            c.n = 23;
            c.A.M = 30; c.A.N = 30; c.A.MB = 4; c.A.NB = 4; c.A.I = 2; c.A.J = 2;
            c.B.M = 27; c.B.N = 25; c.B.MB = 3; c.B.NB = 5; c.B.I = 3; c.B.J = 1; c.B.RSRC = 1;
            mat_setup(&c.A, &ga);
            mat_setup(&c.B, &gb);
            c.gctx = gg.ctxt;
            grid_describe(&gg, c.gdesc, sizeof c.gdesc);
            snprintf(label, sizeof label, "context reuse %d (contexts %d %d %d)", k + 1, gg.ctxt, ga.ctxt,
                     gb.ctxt);
            reuse_run[t]++;
            reuse_ok[t] += check_case(t, &c, label);
            grid_free(&gb, release);
            grid_free(&ga, release);
            grid_free(&gg, release);
        }
    }

    if (me == 0) {
        for (ti = 0; types[ti]; ti++) {
            for (t = 0; t < NTYPES && type_char[t] != types[ti]; t++)
                ;
            if (t == NTYPES)
                continue;
            if (dat) {
                printf("gemr2d %c: %d/%d GEMR2D.dat cases agree", type_char[t], dat_ok[t], dat_run[t]);
                if (dat_skipped)
                    printf(" (%d skipped: need more than %d processes)", dat_skipped, nprocs);
                printf(", ");
            } else {
                printf("gemr2d %c: ", type_char[t]);
            }
            printf("%d/%d random", rnd_ok[t], rnd_run[t]);
            if (reuse_run[t])
                printf(", %d/%d context reuse", reuse_ok[t], reuse_run[t]);
            printf("\n");
            failures += dat_run[t] - dat_ok[t] + rnd_run[t] - rnd_ok[t] + reuse_run[t] - reuse_ok[t];
        }
        printf("check_gemr2d: %d processes: %s [%.1f s]\n", nprocs, failures ? "FAILED" : "all agree",
               MPI_Wtime() - t0);
    }
    {
        long total[NTYPES];
        MPI_Reduce(ours_calls, total, NTYPES, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
        if (me == 0) {
            printf("ndcyclic_calls (summed over ranks):");
            for (t = 0; t < NTYPES; t++)
                printf(" Cp%cgemr2d=%ld", type_char[t], total[t]);
            printf("\n");
        }
    }
    MPI_Bcast(&failures, 1, MPI_INT, 0, MPI_COMM_WORLD);
    free(cases);
    if (release)
        ndcyclic_release_plans(-1);
    Cblacs_gridexit(gctx);
    Cblacs_exit(1); /* BLACS done; MPI finalized below */
    MPI_Finalize();
    return failures ? 1 : 0;
}
