// Keeps the stream busy for a given time before a batch of timed launches: the host submits the
// whole batch while this runs, so no timed sample contains host submission time (a launch the
// device would otherwise wait for). One warp, reading the global nanosecond timer.

#include "common/ptx.cuh"

struct __align__(8) HoldParams {
    unsigned long long ns;
};

extern "C" __global__ void tilepipe_hold(const __grid_constant__ HoldParams p) {
    unsigned long long start, now;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
    do {
        __nanosleep(1000);
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
    } while (now - start < p.ns);
}
