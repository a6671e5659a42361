/* Two processes each build a 64 MiB target from 320-byte runs taken in
 * turn from two 64 MiB shared sources (memfd, as ndcyclic's shared parts),
 * with memcpy or with non-temporal stores, in three orders:
 *   sequential: each reads its half of both sources front to back;
 *   gapped:     each reads every other run of both sources, writing its
 *               target front to back (as a rank of cyclic(40) ->
 *               cyclic(300) on 2 ranks pulls its messages);
 *   pushed:     each reads its own source front to back and writes every
 *               other run of both targets (the same copy, pushed).
 * Prints each process's best and mean of 15 repetitions. The figures are
 * in docs/performance.md (issue 39 entries).
 *
 *   cc -O2 -o /tmp/gapped-reads scripts/gapped-reads.c && /tmp/gapped-reads
 *   /tmp/gapped-reads 640     # another run length, in bytes (a multiple of 64)
 */
#define _GNU_SOURCE
#include <emmintrin.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

static char *shared(size_t n) {
  int fd = memfd_create("gapped-reads", 0);
  if (fd < 0 || ftruncate(fd, (off_t)n) != 0) exit(1);
  char *p = mmap(0, n, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (p == MAP_FAILED) exit(1);
  return p;
}

static void stream(char *d, const char *s, size_t n) {
  for (size_t i = 0; i < n; i += 16)
    _mm_stream_si128((__m128i *)(d + i), _mm_loadu_si128((const __m128i *)(s + i)));
}

int main(int argc, char **argv) {
  size_t run = argc > 1 ? strtoul(argv[1], 0, 10) : 320, n = 64u << 20, half = n / 2;
  if (run == 0 || run % 64) return 2;
  char *src[2] = {shared(n), shared(n)}, *dst[2] = {shared(n), shared(n)};
  for (int r = 0; r < 2; r++) {
    if (fork() != 0) continue;
    memset(src[r], r + 1, n);
    memset(dst[r], 0, n);
    usleep(300000); /* both processes filled before either times */
    for (int order = 0; order < 3; order++)
      for (int nt = 0; nt < 2; nt++) {
        double best = 1e9, sum = 0;
        for (int rep = 0; rep < 15; rep++) {
          double t = now();
          for (size_t o = 0, k = 0; o < n; o += 2 * run, k += run) {
            /* sequential: this rank's half of each source; gapped: every other run */
            size_t at = order == 1 ? 2 * k + r * run : r * half + k;
            for (int s = 0; s < 2; s++) {
              char *d = dst[r] + o + s * run;
              const char *from = src[(r + s) % 2] + at;
              if (order == 2) { /* what rank s pulls from here, written there */
                d = dst[s] + 2 * k + (r + s) % 2 * run;
                from = src[r] + o + s * run;
              }
              if (nt) stream(d, from, run); else memcpy(d, from, run);
            }
          }
          if (nt) _mm_sfence();
          t = now() - t;
          best = t < best ? t : best;
          sum += t;
        }
        printf("process %d, %s sources, %s: best %.2f ms, mean %.2f ms\n", r,
               order == 0 ? "sequential" : order == 1 ? "gapped" : "pushed", nt ? "non-temporal stores" : "memcpy",
               best * 1e3, sum / 15 * 1e3);
      }
    fflush(stdout);
    _exit(0);
  }
  while (wait(0) > 0) {}
  return 0;
}
