/*
 * yield_when_idle.so: makes MPICH's waits give the core away while nothing
 * arrives, for test launches with more ranks than cores.
 *
 * MPICH's ch4 device waits by spinning on its network layer's progress call
 * (UCX's ucp_worker_progress) and, unlike its older ch3 device
 * (MPIR_CVAR_POLLS_BEFORE_YIELD), has no setting that yields. On a machine
 * with fewer cores than ranks a spinning rank then holds a core that the
 * rank it waits for needs until the scheduler's tick takes it away: one
 * barrier of 8 ranks on 2 cores takes about 35 ms. Preloaded, this library
 * stands in for ucp_worker_progress: it calls the real one and, after 16
 * calls in a row that found nothing to do, yields the core (sched_yield).
 * The same barrier then takes about 40 microseconds. Nothing else changes:
 * every call still reaches UCX, in the same order, with the same result.
 *
 * Built by crates/mpi-harness/build.rs (and scripts/yield-when-idle.sh for
 * the shell-driven suites); the harness preloads it into every launch
 * unless NDCYCLIC_MPI_IDLE=spin. A process that never calls UCX (Open MPI
 * without its UCX layer, a serial program) never enters it.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <sched.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

/* Empty progress calls in a row before the core is given away. */
#define IDLE_CALLS_BEFORE_YIELD 16

typedef unsigned (*progress_fn)(void *worker);

/*
 * UCX's own ucp_worker_progress: the next definition in the global lookup
 * order, or, where libucp was loaded into a local scope (Python loads
 * mpi4py's extension, and with it libmpi and libucp, with RTLD_LOCAL), the
 * one of the libucp already loaded. Without it no message would ever
 * progress: stop loudly rather than hang.
 */
static progress_fn real_progress(void)
{
    progress_fn real = (progress_fn)dlsym(RTLD_NEXT, "ucp_worker_progress");
    if (real == NULL) {
        void *ucp = dlopen("libucp.so.0", RTLD_NOW | RTLD_NOLOAD);
        if (ucp != NULL)
            real = (progress_fn)dlsym(ucp, "ucp_worker_progress");
    }
    if (real == NULL) {
        fprintf(stderr, "yield_when_idle.so: UCX's ucp_worker_progress not found; "
                        "run with NDCYCLIC_MPI_IDLE=spin\n");
        abort();
    }
    return real;
}

unsigned ucp_worker_progress(void *worker)
{
    static progress_fn resolved;
    static __thread unsigned idle;
    progress_fn real = __atomic_load_n(&resolved, __ATOMIC_ACQUIRE);
    if (real == NULL) {
        real = real_progress();
        __atomic_store_n(&resolved, real, __ATOMIC_RELEASE);
    }
    unsigned events = real(worker);
    if (events != 0) {
        idle = 0;
    } else if (++idle >= IDLE_CALLS_BEFORE_YIELD) {
        idle = 0;
        sched_yield();
    }
    return events;
}
