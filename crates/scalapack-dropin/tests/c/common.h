/*
 * What the C tests of libndcyclic_scalapack share: the BLACS routines they
 * call (part of libscalapack-mpich; LP64, 32-bit integers), deterministic
 * random numbers that are the same on every rank, and block-cyclic index
 * arithmetic.
 */
#ifndef NDCYCLIC_DROPIN_TEST_COMMON_H
#define NDCYCLIC_DROPIN_TEST_COMMON_H

#include <stdint.h>

extern void Cblacs_get(int ctxt, int what, int *val);
extern void Cblacs_gridinit(int *ctxt, char *order, int nprow, int npcol);
extern void Cblacs_gridmap(int *ctxt, int *usermap, int ldumap, int nprow, int npcol);
extern void Cblacs_gridinfo(int ctxt, int *nprow, int *npcol, int *myrow, int *mycol);
extern void Cblacs_gridexit(int ctxt);
extern void Cblacs_exit(int cont);

#define MAXP 256

/* Deterministic random numbers (splitmix64), the same on every rank. */
static uint64_t rng_state;
static inline uint64_t rng_next(void)
{
    uint64_t z = (rng_state += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

/* Uniform in [0, n). */
static inline int rnd(int n)
{
    return n <= 1 ? 0 : (int)(rng_next() % (uint64_t)n);
}

/* A divisor of t, uniformly among its divisors. */
static inline int random_divisor(int t)
{
    int d, nd = 0, pick;
    for (d = 1; d <= t; d++)
        nd += t % d == 0;
    pick = rnd(nd);
    for (d = 1; d <= t; d++)
        if (t % d == 0 && pick-- == 0)
            return d;
    return 1;
}

/* Elements of a dimension of n (blocks of nb, first block on process src
 * of np) that process p holds. */
static inline int local_count(int n, int nb, int p, int src, int np)
{
    int dist = (p - src + np) % np;
    int blocks = n / nb;
    int count = (blocks / np) * nb;
    int rest = blocks % np;
    if (dist < rest)
        count += nb;
    else if (dist == rest)
        count += n % nb;
    return count;
}

/* Global index (0-based) of local index l on process p. */
static inline int global_index(int l, int nb, int p, int src, int np)
{
    int dist = (p - src + np) % np;
    return (l / nb) * np * nb + dist * nb + l % nb;
}

/* A BLACS grid of a case: its context (-1 on processes outside it), shape,
 * this process's place, and how it was made. Needs ndcyclic_scalapack.h
 * (ndcyclic_release_plans) and stdio.h included first. */
enum { G_ROWMAJOR, G_COLMAJOR, G_MAP };

typedef struct {
    int ctxt; /* -1 outside the grid */
    int nprow, npcol, myrow, mycol, member;
    int kind;
    int procs[MAXP]; /* G_MAP: process at (r, c) is procs[r + c * nprow] */
} grid_t;

/* Leaves the grid, releasing ndcyclic's plans for its context first when
 * `release` (a program linking ScaLAPACK's BLACS first: ndcyclic does not
 * see the gridexit). */
static inline void grid_free(grid_t *g, int release)
{
    if (g->ctxt >= 0) {
        if (release)
            ndcyclic_release_plans(g->ctxt);
        Cblacs_gridexit(g->ctxt);
    }
    g->ctxt = -1;
}

static inline void grid_describe(const grid_t *g, char *buf, size_t len)
{
    int k, off;
    if (g->kind != G_MAP) {
        snprintf(buf, len, "%dx%d(%s)", g->nprow, g->npcol, g->kind == G_ROWMAJOR ? "R" : "C");
        return;
    }
    off = snprintf(buf, len, "%dx%d(map", g->nprow, g->npcol);
    for (k = 0; k < g->nprow * g->npcol && off < (int)len - 8; k++)
        off += snprintf(buf + off, len - (size_t)off, "%c%d", k ? ',' : ':', g->procs[k]);
    snprintf(buf + off, len - (size_t)off, ")");
}

#endif
