/*
 * ndcyclic_scalapack.h: ScaLAPACK's redistribution routines, from ndcyclic.
 *
 * Link libndcyclic_scalapack before ScaLAPACK (or LD_PRELOAD it) and the
 * usual names below run ndcyclic's redistribution; the same routines are
 * also exported with the prefix `ndcyclic_`, so that one program can call
 * both ScaLAPACK's and ndcyclic's.
 *
 * Signatures and semantics are ScaLAPACK's (LP64: 32-bit integers):
 *   p?gemr2d  B(ib:ib+m-1, jb:jb+n-1) := A(ia:ia+m-1, ja:ja+n-1),
 *             collective over `ictxt`, a context holding every process of
 *             A's and B's grids (processes outside a grid pass a
 *             descriptor whose context is -1);
 *   p?tran(u) C(ic:ic+m-1, jc:jc+n-1) := beta*C + alpha*A(ia:ia+n-1, ja:ja+m-1)^T;
 *   p?tranc   the same with the conjugate transpose;
 *   p?geadd   C := beta*C + alpha*op(A), op per `trans` ('N', 'T', 'C').
 * Descriptors are ScaLAPACK's 9 integers: DTYPE(=1), CTXT, M, N, MB, NB,
 * RSRC, CSRC, LLD. Complex numbers are pairs (real, imaginary).
 */
#ifndef NDCYCLIC_SCALAPACK_H
#define NDCYCLIC_SCALAPACK_H

#ifdef __cplusplus
extern "C" {
#endif

typedef struct { float re, im; } ndcyclic_complex;
typedef struct { double re, im; } ndcyclic_complex16;

/* C interface of p?gemr2d (ScaLAPACK's REDIST). */
void Cpsgemr2d(int m, int n, float *a, int ia, int ja, int *desca,
               float *b, int ib, int jb, int *descb, int ictxt);
void Cpdgemr2d(int m, int n, double *a, int ia, int ja, int *desca,
               double *b, int ib, int jb, int *descb, int ictxt);
void Cpcgemr2d(int m, int n, void *a, int ia, int ja, int *desca,
               void *b, int ib, int jb, int *descb, int ictxt);
void Cpzgemr2d(int m, int n, void *a, int ia, int ja, int *desca,
               void *b, int ib, int jb, int *descb, int ictxt);
void Cpigemr2d(int m, int n, int *a, int ia, int ja, int *desca,
               int *b, int ib, int jb, int *descb, int ictxt);

/* Fortran interface (arguments by reference). */
void psgemr2d_(const int *m, const int *n, float *a, const int *ia, const int *ja,
               const int *desca, float *b, const int *ib, const int *jb,
               const int *descb, const int *ictxt);
void pdgemr2d_(const int *m, const int *n, double *a, const int *ia, const int *ja,
               const int *desca, double *b, const int *ib, const int *jb,
               const int *descb, const int *ictxt);
void pcgemr2d_(const int *m, const int *n, void *a, const int *ia, const int *ja,
               const int *desca, void *b, const int *ib, const int *jb,
               const int *descb, const int *ictxt);
void pzgemr2d_(const int *m, const int *n, void *a, const int *ia, const int *ja,
               const int *desca, void *b, const int *ib, const int *jb,
               const int *descb, const int *ictxt);
void pigemr2d_(const int *m, const int *n, int *a, const int *ia, const int *ja,
               const int *desca, int *b, const int *ib, const int *jb,
               const int *descb, const int *ictxt);

/* PBLAS transposes: C := beta*C + alpha*A^T (A is n x m). */
void pstran_(const int *m, const int *n, const float *alpha, const float *a,
             const int *ia, const int *ja, const int *desca, const float *beta,
             float *c, const int *ic, const int *jc, const int *descc);
void pdtran_(const int *m, const int *n, const double *alpha, const double *a,
             const int *ia, const int *ja, const int *desca, const double *beta,
             double *c, const int *ic, const int *jc, const int *descc);
void pctranu_(const int *m, const int *n, const void *alpha, const void *a,
              const int *ia, const int *ja, const int *desca, const void *beta,
              void *c, const int *ic, const int *jc, const int *descc);
void pztranu_(const int *m, const int *n, const void *alpha, const void *a,
              const int *ia, const int *ja, const int *desca, const void *beta,
              void *c, const int *ic, const int *jc, const int *descc);
void pctranc_(const int *m, const int *n, const void *alpha, const void *a,
              const int *ia, const int *ja, const int *desca, const void *beta,
              void *c, const int *ic, const int *jc, const int *descc);
void pztranc_(const int *m, const int *n, const void *alpha, const void *a,
              const int *ia, const int *ja, const int *desca, const void *beta,
              void *c, const int *ic, const int *jc, const int *descc);

/* PBLAS matrix add: C := beta*C + alpha*op(A), op per trans ('N', 'T', 'C'). */
void psgeadd_(const char *trans, const int *m, const int *n, const float *alpha,
              const float *a, const int *ia, const int *ja, const int *desca,
              const float *beta, float *c, const int *ic, const int *jc,
              const int *descc);
void pdgeadd_(const char *trans, const int *m, const int *n, const double *alpha,
              const double *a, const int *ia, const int *ja, const int *desca,
              const double *beta, double *c, const int *ic, const int *jc,
              const int *descc);
void pcgeadd_(const char *trans, const int *m, const int *n, const void *alpha,
              const void *a, const int *ia, const int *ja, const int *desca,
              const void *beta, void *c, const int *ic, const int *jc,
              const int *descc);
void pzgeadd_(const char *trans, const int *m, const int *n, const void *alpha,
              const void *a, const int *ia, const int *ja, const int *desca,
              const void *beta, void *c, const int *ic, const int *jc,
              const int *descc);

/* The same routines under ndcyclic's prefix, to call next to ScaLAPACK's. */
void ndcyclic_Cpsgemr2d(int, int, float *, int, int, int *, float *, int, int, int *, int);
void ndcyclic_Cpdgemr2d(int, int, double *, int, int, int *, double *, int, int, int *, int);
void ndcyclic_Cpcgemr2d(int, int, void *, int, int, int *, void *, int, int, int *, int);
void ndcyclic_Cpzgemr2d(int, int, void *, int, int, int *, void *, int, int, int *, int);
void ndcyclic_Cpigemr2d(int, int, int *, int, int, int *, int *, int, int, int *, int);
void ndcyclic_psgemr2d_(const int *, const int *, float *, const int *, const int *, const int *,
                        float *, const int *, const int *, const int *, const int *);
void ndcyclic_pdgemr2d_(const int *, const int *, double *, const int *, const int *, const int *,
                        double *, const int *, const int *, const int *, const int *);
void ndcyclic_pcgemr2d_(const int *, const int *, void *, const int *, const int *, const int *,
                        void *, const int *, const int *, const int *, const int *);
void ndcyclic_pzgemr2d_(const int *, const int *, void *, const int *, const int *, const int *,
                        void *, const int *, const int *, const int *, const int *);
void ndcyclic_pigemr2d_(const int *, const int *, int *, const int *, const int *, const int *,
                        int *, const int *, const int *, const int *, const int *);
void ndcyclic_pstran_(const int *, const int *, const float *, const float *, const int *,
                      const int *, const int *, const float *, float *, const int *,
                      const int *, const int *);
void ndcyclic_pdtran_(const int *, const int *, const double *, const double *, const int *,
                      const int *, const int *, const double *, double *, const int *,
                      const int *, const int *);
void ndcyclic_pctranu_(const int *, const int *, const void *, const void *, const int *,
                       const int *, const int *, const void *, void *, const int *,
                       const int *, const int *);
void ndcyclic_pztranu_(const int *, const int *, const void *, const void *, const int *,
                       const int *, const int *, const void *, void *, const int *,
                       const int *, const int *);
void ndcyclic_pctranc_(const int *, const int *, const void *, const void *, const int *,
                       const int *, const int *, const void *, void *, const int *,
                       const int *, const int *);
void ndcyclic_pztranc_(const int *, const int *, const void *, const void *, const int *,
                       const int *, const int *, const void *, void *, const int *,
                       const int *, const int *);
void ndcyclic_psgeadd_(const char *, const int *, const int *, const float *, const float *,
                       const int *, const int *, const int *, const float *, float *,
                       const int *, const int *, const int *);
void ndcyclic_pdgeadd_(const char *, const int *, const int *, const double *, const double *,
                       const int *, const int *, const int *, const double *, double *,
                       const int *, const int *, const int *);
void ndcyclic_pcgeadd_(const char *, const int *, const int *, const void *, const void *,
                       const int *, const int *, const int *, const void *, void *,
                       const int *, const int *, const int *);
void ndcyclic_pzgeadd_(const char *, const int *, const int *, const void *, const void *,
                       const int *, const int *, const int *, const void *, void *,
                       const int *, const int *, const int *);

/* Plan cache: calls with the same arguments reuse the redistribution
 * built the first time (at most NDCYCLIC_PLAN_CACHE, default 16, per
 * process; least recently used first out). Releases every cached plan of
 * `ictxt`, or all with -1. Also done by blacs_gridexit and blacs_exit. */
void ndcyclic_release_plans(int ictxt);

#ifdef __cplusplus
}
#endif

#endif
