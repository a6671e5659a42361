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

#endif
