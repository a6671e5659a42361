/*
 * plain_user.c: an unmodified ScaLAPACK program. It knows nothing of
 * ndcyclic: it calls ScaLAPACK's names only (pdgemr2d_, Cpdgemr2d,
 * pdtran_, pdgeadd_, pzgemr2d_) on a few fixed cases and prints, on rank 0,
 * a checksum of the result of each call.
 *
 * The values are small integers and alpha/beta are 2, -1, 0.5, so every
 * result and every checksum is exact: linked against ScaLAPACK alone, or
 * with libndcyclic_scalapack first (or preloaded), it must print the same
 * lines. scripts/test-dropin.sh runs it the three ways.
 *
 * Usage: mpirun.mpich -n P plain_user   (any P >= 1)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The BLACS and ScaLAPACK, as a C program declares them (32-bit ints). */
extern void Cblacs_pinfo(int *mypnum, int *nprocs);
extern void Cblacs_get(int ctxt, int what, int *val);
extern void Cblacs_gridinit(int *ctxt, char *order, int nprow, int npcol);
extern void Cblacs_gridmap(int *ctxt, int *usermap, int ldumap, int nprow, int npcol);
extern void Cblacs_gridinfo(int ctxt, int *nprow, int *npcol, int *myrow, int *mycol);
extern void Cblacs_gridexit(int ctxt);
extern void Cblacs_exit(int cont);
extern void Cdgsum2d(int ctxt, char *scope, char *top, int m, int n, double *a, int lda, int rdest,
                     int cdest);
extern int numroc_(const int *n, const int *nb, const int *iproc, const int *isrcproc,
                   const int *nprocs);

extern void pdgemr2d_(const int *m, const int *n, double *a, const int *ia, const int *ja,
                      const int *desca, double *b, const int *ib, const int *jb, const int *descb,
                      const int *ictxt);
extern void Cpdgemr2d(int m, int n, double *a, int ia, int ja, int *desca, double *b, int ib, int jb,
                      int *descb, int ictxt);
extern void pzgemr2d_(const int *m, const int *n, void *a, const int *ia, const int *ja,
                      const int *desca, void *b, const int *ib, const int *jb, const int *descb,
                      const int *ictxt);
extern void pdtran_(const int *m, const int *n, const double *alpha, const double *a, const int *ia,
                    const int *ja, const int *desca, const double *beta, double *c, const int *ic,
                    const int *jc, const int *descc);
extern void pdgeadd_(const char *trans, const int *m, const int *n, const double *alpha,
                     const double *a, const int *ia, const int *ja, const int *desca,
                     const double *beta, double *c, const int *ic, const int *jc, const int *descc);

static int me, np, all_ctxt;

typedef struct {
    int ctxt, nprow, npcol, myrow, mycol; /* ctxt -1 outside */
} grid;

static grid grid_init(const char *order, int p, int q)
{
    grid g;
    Cblacs_get(0, 0, &g.ctxt);
    Cblacs_gridinit(&g.ctxt, (char *)order, p, q);
    g.nprow = p;
    g.npcol = q;
    g.myrow = g.mycol = -1;
    if (g.ctxt >= 0)
        Cblacs_gridinfo(g.ctxt, &g.nprow, &g.npcol, &g.myrow, &g.mycol);
    return g;
}

/* Grid p x q on the processes of map (column-major). */
static grid grid_map(const int *map, int p, int q)
{
    grid g;
    int m[64];
    memcpy(m, map, sizeof(int) * (size_t)(p * q));
    Cblacs_get(0, 0, &g.ctxt);
    Cblacs_gridmap(&g.ctxt, m, p, p, q);
    g.nprow = p;
    g.npcol = q;
    g.myrow = g.mycol = -1;
    if (g.ctxt >= 0)
        Cblacs_gridinfo(g.ctxt, &g.nprow, &g.npcol, &g.myrow, &g.mycol);
    return g;
}

static void grid_exit(grid *g)
{
    if (g->ctxt >= 0)
        Cblacs_gridexit(g->ctxt);
}

/* A distributed matrix of doubles (cplx: pairs). */
typedef struct {
    const grid *g;
    int M, N, MB, NB, locr, locc, lld, cplx;
    int desc[9];
    double *v;
} dmat;

static dmat dmat_new(const grid *g, int M, int N, int MB, int NB, int rsrc, int csrc, int cplx)
{
    dmat a;
    a.g = g;
    a.M = M;
    a.N = N;
    a.MB = MB;
    a.NB = NB;
    a.cplx = cplx;
    a.locr = a.locc = 0;
    if (g->ctxt >= 0) {
        a.locr = numroc_(&M, &MB, &g->myrow, &rsrc, &g->nprow);
        a.locc = numroc_(&N, &NB, &g->mycol, &csrc, &g->npcol);
    }
    a.lld = a.locr > 1 ? a.locr : 1;
    a.desc[0] = 1;
    a.desc[1] = g->ctxt; /* -1 outside the grid */
    a.desc[2] = M;
    a.desc[3] = N;
    a.desc[4] = MB;
    a.desc[5] = NB;
    a.desc[6] = rsrc;
    a.desc[7] = csrc;
    a.desc[8] = a.lld;
    a.v = calloc((size_t)a.lld * (size_t)(a.locc > 0 ? a.locc : 1) * (cplx ? 2 : 1), sizeof(double));
    return a;
}

static int to_global(int l, int nb, int p, int src, int np_)
{
    return (l / nb) * np_ * nb + ((p - src + np_) % np_) * nb + l % nb;
}

/* Sets every element from its global indices: kind 0 for A-like values,
 * kind 1 for initial contents of a target. */
static void dmat_fill(dmat *a, int kind)
{
    int li, lj;
    for (lj = 0; lj < a->locc; lj++)
        for (li = 0; li < a->locr; li++) {
            int gi = to_global(li, a->MB, a->g->myrow, a->desc[6], a->g->nprow);
            int gj = to_global(lj, a->NB, a->g->mycol, a->desc[7], a->g->npcol);
            double re = kind == 0 ? (double)(gi * 100 + gj + 1) : -(double)(gi * 10 + gj) - 2.0;
            if (a->cplx) {
                a->v[2 * (li + (size_t)lj * a->lld)] = re;
                a->v[2 * (li + (size_t)lj * a->lld) + 1] = kind == 0 ? (double)(gj - 2 * gi) : 7.0;
            } else {
                a->v[li + (size_t)lj * a->lld] = re;
            }
        }
}

/* Sum over the whole matrix of value * weight(global indices), on rank 0. */
static double checksum(const dmat *a)
{
    double s = 0;
    int li, lj;
    for (lj = 0; lj < a->locc; lj++)
        for (li = 0; li < a->locr; li++) {
            int gi = to_global(li, a->MB, a->g->myrow, a->desc[6], a->g->nprow);
            int gj = to_global(lj, a->NB, a->g->mycol, a->desc[7], a->g->npcol);
            double w = 1 + (gi * 7 + gj * 13) % 31;
            if (a->cplx)
                s += a->v[2 * (li + (size_t)lj * a->lld)] * w +
                     a->v[2 * (li + (size_t)lj * a->lld) + 1] * (double)(1 + (gi + 3 * gj) % 17);
            else
                s += a->v[li + (size_t)lj * a->lld] * w;
        }
    Cdgsum2d(all_ctxt, "All", " ", 1, 1, &s, 1, 0, 0);
    return s;
}

static void report(const char *what, const dmat *a)
{
    double s = checksum(a);
    if (me == 0)
        printf("%-44s checksum %.17g\n", what, s);
}

int main(void)
{
    int pr, pc, k, map[64];
    Cblacs_pinfo(&me, &np);
    if (np > 64) {
        if (me == 0)
            fprintf(stderr, "plain_user: at most 64 processes\n");
        Cblacs_exit(0);
        return 2;
    }
    setvbuf(stdout, NULL, _IOLBF, 0);
    /* the most square grid pr x pc with pr <= pc */
    for (pr = 1, k = 1; k * k <= np; k++)
        if (np % k == 0)
            pr = k;
    pc = np / pr;
    Cblacs_get(0, 0, &all_ctxt);
    Cblacs_gridinit(&all_ctxt, "R", 1, np);
    if (me == 0)
        printf("plain_user: %d processes\n", np);

    {
        /* 1. pdgemr2d_: A 37x29 cyclic(4)^2 on 1 x P -> B 40x31 cyclic(3),
         *    cyclic(5) on (P-1) x 1 (the last process outside B's grid). */
        int pb = np > 1 ? np - 1 : 1;
        grid ga = grid_init("R", 1, np), gb = grid_init("R", pb, 1);
        dmat A = dmat_new(&ga, 37, 29, 4, 4, 0, 0, 0);
        dmat B = dmat_new(&gb, 40, 31, 3, 5, pb > 1 ? 1 : 0, 0, 0);
        int m = 30, n = 25, ia = 2, ja = 3, ib = 4, jb = 2;
        dmat_fill(&A, 0);
        dmat_fill(&B, 1);
        pdgemr2d_(&m, &n, A.v, &ia, &ja, A.desc, B.v, &ib, &jb, B.desc, &all_ctxt);
        report("pdgemr2d_ 30x25 1xP -> (P-1)x1", &B);
        dmat_fill(&B, 1);
        pdgemr2d_(&m, &n, A.v, &ia, &ja, A.desc, B.v, &ib, &jb, B.desc, &all_ctxt);
        report("pdgemr2d_ again (same arguments)", &B);

        /* 2. Cpdgemr2d: part of B to D 33x35 cyclic(2),cyclic(3) on a
         *    pr x pc grid of the processes in reverse order. */
        for (k = 0; k < np; k++)
            map[k] = np - 1 - k;
        {
            grid gd = grid_map(map, pr, pc);
            dmat D = dmat_new(&gd, 33, 35, 2, 3, pr - 1, 0, 0);
            dmat_fill(&D, 1);
            Cpdgemr2d(25, 20, B.v, 1, 1, B.desc, D.v, 5, 7, D.desc, all_ctxt);
            report("Cpdgemr2d 25x20 (P-1)x1 -> reversed prxpc", &D);
            free(D.v);
            grid_exit(&gd);
        }
        free(A.v);
        free(B.v);
        grid_exit(&ga);
        grid_exit(&gb);
    }

    {
        /* 3. pdtran_ and 4. pdgeadd_ on a pr x pc grid (column-major). */
        grid g = grid_init("C", pr, pc);
        if (g.ctxt >= 0) {
            dmat A = dmat_new(&g, 24, 18, 3, 2, 0, pc > 1 ? 1 : 0, 0);
            dmat C = dmat_new(&g, 17, 23, 4, 5, pr > 1 ? 1 : 0, 0, 0);
            dmat A2 = dmat_new(&g, 17, 23, 2, 3, 0, 0, 0);
            int m = 15, n = 21, ia = 3, ja = 2, ic = 2, jc = 1, one = 1;
            double two = 2.0, half = 0.5, mone = -1.0;
            dmat_fill(&A, 0);
            dmat_fill(&C, 1);
            dmat_fill(&A2, 0);
            /* C(2:16, 1:21) := 0.5 C + 2 A(3:23, 2:16)^T */
            pdtran_(&m, &n, &two, A.v, &ia, &ja, A.desc, &half, C.v, &ic, &jc, C.desc);
            report("pdtran_ 15x21", &C);
            /* C(2:16, 1:21) := 2 C - A2(1:15, 1:21) */
            pdgeadd_("N", &m, &n, &mone, A2.v, &one, &one, A2.desc, &two, C.v, &ic, &jc, C.desc);
            report("pdgeadd_ N 15x21", &C);
            /* C(2:16, 1:21) := 0.5 C + 2 A(3:23, 2:16)^T through pdgeadd_ */
            pdgeadd_("T", &m, &n, &two, A.v, &ia, &ja, A.desc, &half, C.v, &ic, &jc, C.desc);
            report("pdgeadd_ T 15x21", &C);
            free(A.v);
            free(C.v);
            free(A2.v);
            grid_exit(&g);
        } else {
            /* outside the grid: take part in the checksums only */
            dmat none = dmat_new(&g, 1, 1, 1, 1, 0, 0, 0);
            report("pdtran_ 15x21", &none);
            report("pdgeadd_ N 15x21", &none);
            report("pdgeadd_ T 15x21", &none);
            free(none.v);
        }
    }

    {
        /* 5. pzgemr2d_: complex A 19x26 cyclic(5),cyclic(3) on P x 1 ->
         *    B 22x30 cyclic(2),cyclic(7) on pr x pc (column-major). */
        grid ga = grid_init("R", np, 1), gb = grid_init("C", pr, pc);
        dmat A = dmat_new(&ga, 19, 26, 5, 3, np > 1 ? 1 : 0, 0, 1);
        dmat B = dmat_new(&gb, 22, 30, 2, 7, 0, pc - 1, 1);
        int m = 17, n = 24, ia = 3, ja = 1, ib = 1, jb = 5;
        dmat_fill(&A, 0);
        dmat_fill(&B, 1);
        pzgemr2d_(&m, &n, A.v, &ia, &ja, A.desc, B.v, &ib, &jb, B.desc, &all_ctxt);
        report("pzgemr2d_ 17x24 Px1 -> prxpc", &B);
        free(A.v);
        free(B.v);
        grid_exit(&ga);
        grid_exit(&gb);
    }

    {
        /* 6. pdgemr2d_ with case 1's arguments again, after its grids were
         *    released: the new B grid (likely the same context number) maps
         *    other processes (the first P-1 in reverse order). */
        int pb = np > 1 ? np - 1 : 1;
        grid ga, gb;
        for (k = 0; k < pb; k++)
            map[k] = pb - 1 - k;
        ga = grid_init("R", 1, np);
        gb = grid_map(map, pb, 1);
        {
            dmat A = dmat_new(&ga, 37, 29, 4, 4, 0, 0, 0);
            dmat B = dmat_new(&gb, 40, 31, 3, 5, pb > 1 ? 1 : 0, 0, 0);
            int m = 30, n = 25, ia = 2, ja = 3, ib = 4, jb = 2;
            dmat_fill(&A, 0);
            dmat_fill(&B, 1);
            pdgemr2d_(&m, &n, A.v, &ia, &ja, A.desc, B.v, &ib, &jb, B.desc, &all_ctxt);
            report("pdgemr2d_ case 1, B grid remapped", &B);
            free(A.v);
            free(B.v);
        }
        grid_exit(&ga);
        grid_exit(&gb);
    }

    Cblacs_gridexit(all_ctxt);
    Cblacs_exit(0);
    return 0;
}
