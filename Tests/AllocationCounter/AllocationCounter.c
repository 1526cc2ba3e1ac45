#include "AllocationCounter.h"
// Linux (glibc) only: the test executable's own malloc family takes precedence over libc's
// for the whole process and forwards to glibc's implementation, counting on threads that
// asked to be counted. Elsewhere counting is reported unavailable.
#include <stdlib.h>
#include <errno.h>
#if !defined(__has_feature)
#define __has_feature(feature) 0
#endif
// Sanitizers bring their own allocator, which these definitions would bypass.
#if defined(__linux__) && defined(__GLIBC__) && !__has_feature(address_sanitizer) && !__has_feature(thread_sanitizer)

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void *__libc_memalign(size_t, size_t);
extern void __libc_free(void *);

extern size_t malloc_usable_size(void *);

static _Thread_local int sb_counting;
static _Thread_local size_t sb_bytes;
static _Thread_local long long sb_retained;
static _Thread_local long long sb_peak;

static inline void *sb_allocated(void *pointer, size_t size) {
    if (sb_counting) {
        sb_bytes += size;
        if (pointer) sb_retained += (long long)malloc_usable_size(pointer);
        if (sb_retained > sb_peak) sb_peak = sb_retained;
    }
    return pointer;
}

static inline void sb_freeing(void *pointer) {
    if (sb_counting && pointer) sb_retained -= (long long)malloc_usable_size(pointer);
}

void *malloc(size_t size) { return sb_allocated(__libc_malloc(size), size); }
void *calloc(size_t count, size_t size) { return sb_allocated(__libc_calloc(count, size), count * size); }
void *realloc(void *pointer, size_t size) {
    sb_freeing(pointer);
    return sb_allocated(__libc_realloc(pointer, size), size);
}
void free(void *pointer) { sb_freeing(pointer); __libc_free(pointer); }
void *memalign(size_t alignment, size_t size) { return sb_allocated(__libc_memalign(alignment, size), size); }
void *aligned_alloc(size_t alignment, size_t size) { return sb_allocated(__libc_memalign(alignment, size), size); }
int posix_memalign(void **result, size_t alignment, size_t size) {
    void *pointer = sb_allocated(__libc_memalign(alignment, size), size);
    if (!pointer) return ENOMEM;
    *result = pointer;
    return 0;
}

int sb_allocation_counting_available(void) { return 1; }
void sb_allocation_counting_begin(void) { sb_bytes = 0; sb_retained = 0; sb_peak = 0; sb_counting = 1; }
size_t sb_allocation_counting_end(void) { sb_counting = 0; return sb_bytes; }
long long sb_allocation_counting_retained(void) { return sb_retained; }
long long sb_allocation_counting_peak(void) { return sb_peak; }
#else
int sb_allocation_counting_available(void) { return 0; }
void sb_allocation_counting_begin(void) {}
size_t sb_allocation_counting_end(void) { return 0; }
long long sb_allocation_counting_retained(void) { return 0; }
long long sb_allocation_counting_peak(void) { return 0; }
#endif
