#ifndef SWITCHBOARD_ALLOCATION_COUNTER_H
#define SWITCHBOARD_ALLOCATION_COUNTER_H

#include <stddef.h>

/// Starts counting the bytes the calling thread allocates from the heap (Swift objects,
/// array and dictionary storage, boxes: everything goes through malloc). A deterministic
/// measure of work for tests: it does not depend on time or machine load.
void sb_allocation_counting_begin(void);

/// Stops counting on the calling thread and returns the bytes requested since the begin.
size_t sb_allocation_counting_end(void);

/// Of the last counting window, the bytes still allocated at its end: allocations less what
/// the thread freed (as malloc sized the blocks).
long long sb_allocation_counting_retained(void);

/// Of the last counting window, the most bytes held at once (as ``retained`` counts them).
long long sb_allocation_counting_peak(void);

/// Whether allocations can be counted here (glibc only; 0 elsewhere).
int sb_allocation_counting_available(void);

#endif
