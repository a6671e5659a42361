/*
 * FFTW-MPI peer benchmark for ndcyclic's 3-D FFT on pencils.
 *
 * On P ranks it measures two things on an N x M x K array of complex
 * doubles, distributed the way FFTW distributes it (slabs of the first
 * dimension, FFTW_MPI_DEFAULT_BLOCK rows per rank):
 *
 *   1. FFTW's distributed transpose, fftw_mpi_plan_many_transpose(N, M, 2*K,
 *      ...): the N x M matrix whose elements are blocks of K complex values
 *      (2*K doubles) goes from slabs of the first dimension to slabs of the
 *      second, i.e. x-slabs -> y-slabs of the 3-D array (M x N x K after).
 *      Out of place (in -> out).
 *   2. FFTW's forward 3-D complex DFT, fftw_mpi_plan_dft_3d(N, M, K, ...,
 *      FFTW_FORWARD, FFTW_MEASURE). Out of place, with FFTW's default output
 *      layout (no FFTW_MPI_TRANSPOSED_OUT): the output is distributed like
 *      the input, so FFTW transposes there and back inside the transform.
 *
 * Timing: each of the R repetitions refills the input (FFTW is free to
 * scribble on it, and FFTW_MEASURE planning certainly does), then
 * MPI_Barrier, then one execute between two MPI_Wtime calls; a repetition's
 * time is the maximum over ranks (MPI_Allreduce). Reported: median and
 * minimum over the repetitions, and the planning time (also the maximum
 * over ranks). Every repetition's result is checked: the transpose exactly
 * against the input pattern, the DFT against the known spectrum of a single
 * plane wave (a spike of height N*M*K at its wave vector, zero elsewhere);
 * fft_max_error is max |X - X_exact| / (N*M*K) over all repetitions.
 *
 * Usage: mpirun -n P fftw_mpi_bench --n N --m M --k K --reps R [--json]
 * With --json, rank 0 prints one JSON object on one line, last on stdout.
 * Exit codes: 0 success, 1 a check failed, 2 bad arguments.
 *
 * Build against the MPI FFTW was built with (Debian: Open MPI):
 *   mpicc.openmpi -std=c99 -O3 -Wall -Wextra fftw_mpi_bench.c \
 *       -lfftw3_mpi -lfftw3 -lm -o fftw_mpi_bench
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <fftw3-mpi.h>
#include <mpi.h>

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

struct options {
    ptrdiff_t n, m, k;
    int reps;
    int json;
};

/* Parses a positive integer no larger than max; returns 0 on success. */
static int parse_positive(const char *s, long long max, long long *out)
{
    char *end;
    long long v;
    if (s == NULL || *s == '\0')
        return -1;
    errno = 0;
    v = strtoll(s, &end, 10);
    if (errno != 0 || *end != '\0' || v <= 0 || v > max)
        return -1;
    *out = v;
    return 0;
}

static const char usage[] =
    "usage: fftw_mpi_bench --n N --m M --k K --reps R [--json]\n"
    "  N, M, K: the array is N x M x K complex doubles (positive integers)\n"
    "  R: timed repetitions of each operation (positive integer)\n"
    "  --json: also print one JSON line with the results (last line)\n";

/*
 * Fills *o from argv. Returns 0 when the run should go ahead, otherwise the
 * exit code (0 for --help, 2 for bad arguments), with msg describing why.
 */
static int parse_args(int argc, char **argv, struct options *o, char *msg,
                      size_t msglen, int *stop)
{
    long long v, dims[3] = {0, 0, 0}, reps = 0;
    int i;
    *stop = 0;
    o->json = 0;
    msg[0] = '\0';
    for (i = 1; i < argc; i++) {
        const char *a = argv[i];
        int which = -1;
        if (strcmp(a, "--json") == 0) {
            o->json = 1;
            continue;
        }
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            *stop = 1;
            return 0;
        }
        if (strcmp(a, "--n") == 0)
            which = 0;
        else if (strcmp(a, "--m") == 0)
            which = 1;
        else if (strcmp(a, "--k") == 0)
            which = 2;
        else if (strcmp(a, "--reps") == 0)
            which = 3;
        else {
            snprintf(msg, msglen, "unknown argument '%s'", a);
            return 2;
        }
        if (i + 1 >= argc) {
            snprintf(msg, msglen, "%s needs a value", a);
            return 2;
        }
        /* Sizes: at most 2^31-1 each (FFTW plans with int-sized loops in
         * places); reps: at most 1e6. */
        if (parse_positive(argv[i + 1], which == 3 ? 1000000 : INT_MAX, &v)) {
            snprintf(msg, msglen, "%s wants a positive integer%s, got '%s'", a,
                     which == 3 ? " up to 1000000" : "", argv[i + 1]);
            return 2;
        }
        if (which == 3)
            reps = v;
        else
            dims[which] = v;
        i++;
    }
    if (dims[0] == 0 || dims[1] == 0 || dims[2] == 0 || reps == 0) {
        snprintf(msg, msglen, "--n, --m, --k and --reps are all required");
        return 2;
    }
    /* The whole array must be addressable: N*M*K*2 doubles in ptrdiff_t. */
    if ((double)dims[0] * (double)dims[1] * (double)dims[2] * 16.0 >
        (double)PTRDIFF_MAX / 2) {
        snprintf(msg, msglen, "array of %lld x %lld x %lld is too large",
                 dims[0], dims[1], dims[2]);
        return 2;
    }
    o->n = (ptrdiff_t)dims[0];
    o->m = (ptrdiff_t)dims[1];
    o->k = (ptrdiff_t)dims[2];
    o->reps = (int)reps;
    return 0;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(const double *t, int n)
{
    double *s = malloc((size_t)n * sizeof *s), r;
    if (s == NULL) {
        fprintf(stderr, "fftw_mpi_bench: out of memory\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
        return 0;
    }
    memcpy(s, t, (size_t)n * sizeof *s);
    qsort(s, (size_t)n, sizeof *s, cmp_double);
    r = n % 2 ? s[n / 2] : 0.5 * (s[n / 2 - 1] + s[n / 2]);
    free(s);
    return r;
}

static double minimum(const double *t, int n)
{
    double r = t[0];
    int i;
    for (i = 1; i < n; i++)
        if (t[i] < r)
            r = t[i];
    return r;
}

/* Maximum of a local value over all ranks. */
static double max_over_ranks(double v)
{
    double r;
    MPI_Allreduce(&v, &r, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return r;
}

/* fftw_malloc of at least one element, so that ranks FFTW gives no data
 * still pass valid pointers to the planner. Aborts when out of memory. */
static double *alloc_doubles(ptrdiff_t count)
{
    double *p = fftw_alloc_real((size_t)(count > 0 ? count : 1));
    if (p == NULL) {
        fprintf(stderr, "fftw_mpi_bench: cannot allocate %td doubles\n", count);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    return p;
}

static fftw_complex *alloc_complex(ptrdiff_t count)
{
    fftw_complex *p = fftw_alloc_complex((size_t)(count > 0 ? count : 1));
    if (p == NULL) {
        fprintf(stderr, "fftw_mpi_bench: cannot allocate %td complex values\n",
                count);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    return p;
}

/*
 * The transpose's test pattern: a value that depends on the global position
 * (row i of N, column j of M, double l of the 2*K in a block) and is exactly
 * representable, so the check after the transpose can compare with ==.
 */
static double pattern(ptrdiff_t i, ptrdiff_t j, ptrdiff_t l, ptrdiff_t m,
                      ptrdiff_t k2)
{
    return (double)(((i * m + j) * k2 + l) % 1000003) + 0.25 * (double)(l & 3);
}

struct transpose_result {
    double plan_ms, median_ms, min_ms;
    long long mismatches; /* summed over ranks and repetitions */
};

static struct transpose_result bench_transpose(const struct options *o)
{
    struct transpose_result res;
    const ptrdiff_t n = o->n, m = o->m, k2 = 2 * o->k;
    const ptrdiff_t dims[2] = {n, m};
    ptrdiff_t alloc, n0, start0, n1, start1, i, j, l;
    double *in, *out, *times, t0;
    long long bad = 0;
    fftw_plan plan;
    int r;

    /* Local rows before (n0 of N, from start0) and after (n1 of M, from
     * start1); either may be 0 on some ranks when P does not divide N or M.
     * alloc is in doubles and covers both layouts plus FFTW's scratch. */
    alloc = fftw_mpi_local_size_many_transposed(
        2, dims, k2, FFTW_MPI_DEFAULT_BLOCK, FFTW_MPI_DEFAULT_BLOCK,
        MPI_COMM_WORLD, &n0, &start0, &n1, &start1);
    in = alloc_doubles(alloc);
    out = alloc_doubles(alloc);
    times = malloc((size_t)o->reps * sizeof *times);
    if (times == NULL) {
        fprintf(stderr, "fftw_mpi_bench: out of memory\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }

    MPI_Barrier(MPI_COMM_WORLD);
    t0 = MPI_Wtime();
    plan = fftw_mpi_plan_many_transpose(n, m, k2, FFTW_MPI_DEFAULT_BLOCK,
                                        FFTW_MPI_DEFAULT_BLOCK, in, out,
                                        MPI_COMM_WORLD, FFTW_MEASURE);
    res.plan_ms = max_over_ranks((MPI_Wtime() - t0) * 1e3);
    if (plan == NULL) {
        fprintf(stderr, "fftw_mpi_bench: FFTW could not plan the transpose\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }

    for (r = 0; r < o->reps; r++) {
        /* Input: local rows start0 .. start0+n0-1 of the N x M x 2K array. */
        for (i = 0; i < n0; i++)
            for (j = 0; j < m; j++)
                for (l = 0; l < k2; l++)
                    in[(i * m + j) * k2 + l] = pattern(start0 + i, j, l, m, k2);
        MPI_Barrier(MPI_COMM_WORLD);
        t0 = MPI_Wtime();
        fftw_execute(plan);
        times[r] = max_over_ranks((MPI_Wtime() - t0) * 1e3);
        /* Output: local rows start1 .. start1+n1-1 of the M x N x 2K array;
         * element (j, i, l) there is element (i, j, l) of the input. */
        for (j = 0; j < n1; j++)
            for (i = 0; i < n; i++)
                for (l = 0; l < k2; l++)
                    if (out[(j * n + i) * k2 + l] !=
                        pattern(i, start1 + j, l, m, k2))
                        bad++;
    }
    MPI_Allreduce(&bad, &res.mismatches, 1, MPI_LONG_LONG, MPI_SUM,
                  MPI_COMM_WORLD);
    res.median_ms = median(times, o->reps);
    res.min_ms = minimum(times, o->reps);

    fftw_destroy_plan(plan);
    fftw_free(in);
    fftw_free(out);
    free(times);
    return res;
}

struct fft_result {
    double plan_ms, median_ms, min_ms, max_error;
};

/* exp(2*pi*i * (idx*freq mod len)/len) for idx = 0 .. len-1; the integer
 * reduction keeps the phase accurate for any size. */
static fftw_complex *twiddles(ptrdiff_t len, ptrdiff_t freq)
{
    fftw_complex *w = alloc_complex(len);
    ptrdiff_t idx;
    for (idx = 0; idx < len; idx++) {
        double phase =
            2.0 * M_PI * (double)((idx * freq) % len) / (double)len;
        w[idx][0] = cos(phase);
        w[idx][1] = sin(phase);
    }
    return w;
}

static struct fft_result bench_fft(const struct options *o)
{
    struct fft_result res;
    const ptrdiff_t n = o->n, m = o->m, k = o->k;
    /* The plane wave's wave vector: small, distinct frequencies in each
     * dimension (wrapped for tiny sizes). */
    const ptrdiff_t fa = 1 % n, fb = 2 % m, fc = 3 % k;
    const double volume = (double)n * (double)m * (double)k;
    ptrdiff_t alloc, n0, start0, a, b, c;
    fftw_complex *in, *out, *wa, *wb, *wc;
    double *times, t0, err = 0;
    fftw_plan plan;
    int r;

    /* Input and output alike: rows start0 .. start0+n0-1 of the first
     * dimension (n0 may be 0); alloc is in complex values. */
    alloc = fftw_mpi_local_size_3d(n, m, k, MPI_COMM_WORLD, &n0, &start0);
    in = alloc_complex(alloc);
    out = alloc_complex(alloc);
    times = malloc((size_t)o->reps * sizeof *times);
    if (times == NULL) {
        fprintf(stderr, "fftw_mpi_bench: out of memory\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }

    MPI_Barrier(MPI_COMM_WORLD);
    t0 = MPI_Wtime();
    plan = fftw_mpi_plan_dft_3d(n, m, k, in, out, MPI_COMM_WORLD,
                                FFTW_FORWARD, FFTW_MEASURE);
    res.plan_ms = max_over_ranks((MPI_Wtime() - t0) * 1e3);
    if (plan == NULL) {
        fprintf(stderr, "fftw_mpi_bench: FFTW could not plan the 3-D DFT\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }

    wa = twiddles(n, fa);
    wb = twiddles(m, fb);
    wc = twiddles(k, fc);
    for (r = 0; r < o->reps; r++) {
        /* x[a][b][c] = exp(2*pi*i*(fa*a/N + fb*b/M + fc*c/K)), filled after
         * planning since FFTW_MEASURE overwrote the arrays. */
        for (a = 0; a < n0; a++)
            for (b = 0; b < m; b++) {
                const double *pa = wa[start0 + a], *pb = wb[b];
                const double abr = pa[0] * pb[0] - pa[1] * pb[1];
                const double abi = pa[0] * pb[1] + pa[1] * pb[0];
                fftw_complex *row = in + (a * m + b) * k;
                for (c = 0; c < k; c++) {
                    row[c][0] = abr * wc[c][0] - abi * wc[c][1];
                    row[c][1] = abr * wc[c][1] + abi * wc[c][0];
                }
            }
        MPI_Barrier(MPI_COMM_WORLD);
        t0 = MPI_Wtime();
        fftw_execute(plan);
        times[r] = max_over_ranks((MPI_Wtime() - t0) * 1e3);
        /* The forward DFT (exponent sign -1) of that wave is N*M*K at
         * (fa, fb, fc) and 0 everywhere else. */
        for (a = 0; a < n0; a++)
            for (b = 0; b < m; b++)
                for (c = 0; c < k; c++) {
                    const double *x = out[(a * m + b) * k + c];
                    const int spike = start0 + a == fa && b == fb && c == fc;
                    const double d =
                        hypot(x[0] - (spike ? volume : 0.0), x[1]) / volume;
                    /* !(d <= err) also catches NaN. */
                    if (!(d <= err))
                        err = d;
                }
    }
    /* MPI_MAX need not propagate NaN; infinity it does. */
    res.max_error = max_over_ranks(isnan(err) ? INFINITY : err);
    res.median_ms = median(times, o->reps);
    res.min_ms = minimum(times, o->reps);

    fftw_destroy_plan(plan);
    fftw_free(wa);
    fftw_free(wb);
    fftw_free(wc);
    fftw_free(in);
    fftw_free(out);
    free(times);
    return res;
}

/* Prints s as a JSON string (quotes and escapes included). */
static void json_string(const char *s)
{
    putchar('"');
    for (; *s; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ch == '"' || ch == '\\')
            printf("\\%c", ch);
        else if (ch < 0x20)
            printf("\\u%04x", ch);
        else
            putchar(ch);
    }
    putchar('"');
}

/* The error bound the check accepts: a few hundred ulps of the peak,
 * growing with the logarithm of the size as FFT roundoff does. */
static double error_tolerance(const struct options *o)
{
    return 1e-13 * (1.0 + log2((double)o->n * (double)o->m * (double)o->k));
}

int main(int argc, char **argv)
{
    struct options o;
    struct transpose_result tr;
    struct fft_result fr;
    char msg[256];
    int rank, size, code, stop, ok;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    /* Every rank parses the same argv, so all reach the same verdict. */
    code = parse_args(argc, argv, &o, msg, sizeof msg, &stop);
    if (code != 0 || stop) {
        if (rank == 0) {
            if (code != 0)
                fprintf(stderr, "fftw_mpi_bench: %s\n%s", msg, usage);
            else
                fputs(usage, stdout);
        }
        MPI_Finalize();
        return code;
    }

    fftw_mpi_init();
    tr = bench_transpose(&o);
    fr = bench_fft(&o);
    ok = tr.mismatches == 0 && fr.max_error <= error_tolerance(&o);

    if (rank == 0) {
        printf("FFTW-MPI (%s), %d ranks, %td x %td x %td complex doubles "
               "(%.1f MiB per array), %d reps\n",
               fftw_version, size, o.n, o.m, o.k,
               (double)o.n * (double)o.m * (double)o.k * 16.0 / 1048576.0,
               o.reps);
        printf("  transpose %td x %td of %td-double blocks (x-slabs -> "
               "y-slabs): median %.3f ms, min %.3f ms, plan %.1f ms, %s\n",
               o.n, o.m, 2 * o.k, tr.median_ms, tr.min_ms, tr.plan_ms,
               tr.mismatches == 0 ? "output exact" : "OUTPUT WRONG");
        if (tr.mismatches != 0)
            printf("    %lld mismatched doubles over all reps\n",
                   tr.mismatches);
        printf("  3-D forward DFT, out of place: median %.3f ms, min %.3f "
               "ms, plan %.1f ms, max error %.3g (tolerance %.3g)\n",
               fr.median_ms, fr.min_ms, fr.plan_ms, fr.max_error,
               error_tolerance(&o));
        if (o.json) {
            printf("{\"ranks\":%d,\"n\":%td,\"m\":%td,\"k\":%td,\"reps\":%d,"
                   "\"transpose_ms_median\":%.6f,\"transpose_ms_min\":%.6f,"
                   "\"transpose_plan_ms\":%.6f,\"transpose_exact\":%s,"
                   "\"fft_ms_median\":%.6f,\"fft_ms_min\":%.6f,"
                   "\"fft_plan_ms\":%.6f,\"fft_max_error\":%.6e,"
                   "\"fftw_version\":",
                   size, o.n, o.m, o.k, o.reps, tr.median_ms, tr.min_ms,
                   tr.plan_ms, tr.mismatches == 0 ? "true" : "false",
                   fr.median_ms, fr.min_ms, fr.plan_ms, fr.max_error);
            json_string(fftw_version);
            printf("}\n");
        }
        if (!ok)
            fprintf(stderr, "fftw_mpi_bench: check failed\n");
        fflush(stdout);
    }

    fftw_mpi_cleanup();
    MPI_Finalize();
    return ok ? 0 : 1;
}
