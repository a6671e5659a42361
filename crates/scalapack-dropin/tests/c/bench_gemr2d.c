/*
 * bench_gemr2d.c: times ndcyclic's and ScaLAPACK's Cpdgemr2d on
 *   cyclic(16)^2 @ 1xP  ->  cyclic(8),cyclic(32) @ Px1
 * (A: MB = NB = 16 on a 1 x P grid; B: MB = 8, NB = 32 on a P x 1 grid;
 * the global context holds every process), f64, n x n for each size n.
 *
 * Per size: the first call of ndcyclic_Cpdgemr2d (the first ever with
 * those arguments: the plan is built), the median of repeated calls
 * (cached plan), then ScaLAPACK's first call and the median of its repeated
 * calls. A barrier precedes every timed call; a call's time is the largest
 * over the ranks. Both results are compared (exactly) with each other.
 * Before any timing, each library is called once on a small size not in
 * the list (its one-time set-up: communicators, the first connections),
 * unless --no-warmup: a "first call" is then the first with its arguments.
 *
 * Order matters: per size, the library timed first runs into a colder
 * process (glibc's malloc raises its mmap threshold as large blocks are
 * freed, so the first calls of a size page-fault more than later ones);
 * ndcyclic goes first unless --scalapack-first.
 *
 * Build: as check_gemr2d.c. Usage:
 *   mpirun.mpich -n P bench_gemr2d [--reps R] [--json] [--no-warmup]
 *                [--scalapack-first] [n ...]     (sizes default to 64 512 2048)
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ndcyclic_scalapack.h"

extern void Cblacs_get(int ctxt, int what, int *val);
extern void Cblacs_gridinit(int *ctxt, char *order, int nprow, int npcol);
extern void Cblacs_gridinfo(int ctxt, int *nprow, int *npcol, int *myrow, int *mycol);
extern void Cblacs_gridexit(int ctxt);
extern void Cblacs_exit(int cont);

#ifdef SELFTEST
#define ndcyclic_Cpdgemr2d Cpdgemr2d
#endif

static int local_count(int n, int nb, int p, int src, int np)
{
    int dist = (p - src + np) % np, blocks = n / nb;
    int count = (blocks / np) * nb, rest = blocks % np;
    if (dist < rest)
        count += nb;
    else if (dist == rest)
        count += n % nb;
    return count;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

typedef void (*gemr2d_fn)(int, int, double *, int, int, int *, double *, int, int, int *, int);

/* One call, timed: barrier, call, max over ranks (seconds). */
static double timed(gemr2d_fn f, int n, double *a, int *da, double *b, int *db, int ctxt)
{
    double t, tmax;
    MPI_Barrier(MPI_COMM_WORLD);
    t = MPI_Wtime();
    f(n, n, a, 1, 1, da, b, 1, 1, db, ctxt);
    t = MPI_Wtime() - t;
    MPI_Allreduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return tmax;
}

static void ours(int m, int n, double *a, int ia, int ja, int *da, double *b, int ib, int jb, int *db,
                 int ctxt)
{
    ndcyclic_Cpdgemr2d(m, n, a, ia, ja, da, b, ib, jb, db, ctxt);
}

static void scalapack(int m, int n, double *a, int ia, int ja, int *da, double *b, int ib, int jb,
                      int *db, int ctxt)
{
    Cpdgemr2d(m, n, a, ia, ja, da, b, ib, jb, db, ctxt);
}

/* Local sizes and descriptors of the benchmark's A and B for size n. */
static void setup(int n, int actx, int bctx, int np, int *da, int *db, size_t *na, size_t *nb)
{
    int r, c, myr, myc, la, ca, lb, cb;
    Cblacs_gridinfo(actx, &r, &c, &myr, &myc);
    la = local_count(n, 16, myr, 0, 1);
    ca = local_count(n, 16, myc, 0, np);
    Cblacs_gridinfo(bctx, &r, &c, &myr, &myc);
    lb = local_count(n, 8, myr, 0, np);
    cb = local_count(n, 32, myc, 0, 1);
    da[0] = 1; da[1] = actx; da[2] = n; da[3] = n; da[4] = 16; da[5] = 16; da[6] = 0; da[7] = 0;
    da[8] = la > 1 ? la : 1;
    db[0] = 1; db[1] = bctx; db[2] = n; db[3] = n; db[4] = 8; db[5] = 32; db[6] = 0; db[7] = 0;
    db[8] = lb > 1 ? lb : 1;
    *na = (size_t)da[8] * (size_t)(ca > 0 ? ca : 1);
    *nb = (size_t)db[8] * (size_t)(cb > 0 ? cb : 1);
}

int main(int argc, char **argv)
{
    int me, np, i, s, reps = 10, json = 0, warmup = 1, scalapack_first = 0, nsizes = 0, sizes[64];
    int gctx, actx, bctx;
    char *json_buf;
    size_t json_len = 0, json_cap = 1 << 16;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    for (i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--json"))
            json = 1;
        else if (!strcmp(argv[i], "--no-warmup"))
            warmup = 0;
        else if (!strcmp(argv[i], "--scalapack-first"))
            scalapack_first = 1;
        else if (!strcmp(argv[i], "--reps") && i + 1 < argc)
            reps = atoi(argv[++i]);
        else if (atoi(argv[i]) > 0 && nsizes < 64)
            sizes[nsizes++] = atoi(argv[i]);
        else {
            if (me == 0)
                fprintf(stderr, "usage: bench_gemr2d [--reps R] [--json] [--no-warmup] [--scalapack-first] [n ...]\n");
            MPI_Finalize();
            return 2;
        }
    }
    if (reps < 1)
        reps = 1;
    if (nsizes == 0) {
        sizes[0] = 64;
        sizes[1] = 512;
        sizes[2] = 2048;
        nsizes = 3;
    }
    json_buf = malloc(json_cap);
    json_buf[0] = 0;

    Cblacs_get(0, 0, &gctx);
    Cblacs_gridinit(&gctx, "R", 1, np);
    Cblacs_get(0, 0, &actx);
    Cblacs_gridinit(&actx, "R", 1, np);
    Cblacs_get(0, 0, &bctx);
    Cblacs_gridinit(&bctx, "R", np, 1);

    /* Every pair of ranks talks once before any timing. */
    {
        int *sb = calloc((size_t)np, sizeof(int)), *rb = calloc((size_t)np, sizeof(int));
        MPI_Alltoall(sb, 1, MPI_INT, rb, 1, MPI_INT, MPI_COMM_WORLD);
        free(sb);
        free(rb);
    }
    if (warmup) {
        int w = 24, da[9], db[9], taken = 1;
        size_t na, nb;
        double *a, *b;
        while (taken)
            for (taken = 0, i = 0; i < nsizes; i++)
                if (sizes[i] == w) {
                    w++;
                    taken = 1;
                }
        setup(w, actx, bctx, np, da, db, &na, &nb);
        a = calloc(na, sizeof(double));
        b = calloc(nb, sizeof(double));
        timed(ours, w, a, da, b, db, gctx);
        timed(scalapack, w, a, da, b, db, gctx);
        free(a);
        free(b);
    }
    if (me == 0) {
#ifdef SELFTEST
        printf("bench_gemr2d: SELFTEST build: \"ndcyclic\" is ScaLAPACK here\n");
#endif
        printf("bench_gemr2d: %d ranks, cyclic(16)^2@1x%d -> cyclic(8),cyclic(32)@%dx1, f64, "
               "median of %d, ms (max over ranks), %s, %s timed first\n",
               np, np, np, reps, warmup ? "libraries warmed up on another size" : "no warm-up",
               scalapack_first ? "ScaLAPACK" : "ndcyclic");
        printf("%7s %12s %12s %12s %12s %10s %10s %s\n", "n", "ours_first", "ours_cached", "scal_first",
               "scal_median", "first x", "cached x", "check");
    }

    for (s = 0; s < nsizes; s++) {
        int n = sizes[s], da[9], db[9], k, agree, all_agree;
        double *a, *b1, *b2, *tv = malloc(sizeof(double) * (size_t)reps);
        double ours_first = 0, ours_med = 0, scal_first = 0, scal_med = 0;
        size_t na, nb, q;

        setup(n, actx, bctx, np, da, db, &na, &nb);
        a = malloc(na * sizeof(double));
        b1 = malloc(nb * sizeof(double));
        b2 = malloc(nb * sizeof(double));
        for (q = 0; q < na; q++)
            a[q] = (double)(me * 1000003 + (long)q);
        /* touch the targets: no page faults in the timings */
        memset(b1, 0, nb * sizeof(double));
        memset(b2, 0, nb * sizeof(double));

        for (k = 0; k < 2; k++) {
            if ((k == 0) != scalapack_first) {
                ours_first = timed(ours, n, a, da, b1, db, gctx);
                for (i = 0; i < reps; i++)
                    tv[i] = timed(ours, n, a, da, b1, db, gctx);
                ours_med = median(tv, reps);
            } else {
                scal_first = timed(scalapack, n, a, da, b2, db, gctx);
                for (i = 0; i < reps; i++)
                    tv[i] = timed(scalapack, n, a, da, b2, db, gctx);
                scal_med = median(tv, reps);
            }
        }

        agree = memcmp(b1, b2, nb * sizeof(double)) == 0;
        MPI_Allreduce(&agree, &all_agree, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
        if (me == 0) {
            printf("%7d %12.3f %12.3f %12.3f %12.3f %10.2f %10.2f %s\n", n, ours_first * 1e3,
                   ours_med * 1e3, scal_first * 1e3, scal_med * 1e3, scal_first / ours_first,
                   scal_med / ours_med, all_agree ? "same result" : "RESULTS DIFFER");
            if (json_len + 512 < json_cap)
                json_len += (size_t)snprintf(
                    json_buf + json_len, json_cap - json_len,
                    "%s\n  {\"ranks\": %d, \"n\": %d, \"reps\": %d, \"ours_first_ms\": %.6f, "
                    "\"ours_cached_median_ms\": %.6f, \"scalapack_first_ms\": %.6f, "
                    "\"scalapack_median_ms\": %.6f, \"speedup_first\": %.4f, \"speedup_cached\": %.4f, "
                    "\"warmup\": %s, \"scalapack_first\": %s, \"same_result\": %s}",
                    s ? "," : "", np, n, reps, ours_first * 1e3, ours_med * 1e3, scal_first * 1e3,
                    scal_med * 1e3, scal_first / ours_first, scal_med / ours_med,
                    warmup ? "true" : "false", scalapack_first ? "true" : "false", all_agree ? "true" : "false");
        }
        free(a);
        free(b1);
        free(b2);
        free(tv);
    }
    if (me == 0) {
        printf("(x = ScaLAPACK time / ndcyclic time: above 1, ndcyclic is faster)\n");
        if (json)
            printf("[%s\n]\n", json_buf);
    }
    free(json_buf);
    Cblacs_gridexit(actx);
    Cblacs_gridexit(bctx);
    Cblacs_gridexit(gctx);
    Cblacs_exit(1);
    MPI_Finalize();
    return 0;
}
