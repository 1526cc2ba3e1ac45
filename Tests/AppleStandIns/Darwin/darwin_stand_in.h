// Declarations as <sys/event.h>, <time.h>, <unistd.h> and <errno.h> give them on Apple platforms.
#include <stdint.h>
// The host's own timespec: Swift already sees it through Dispatch, and a second definition clashes.
#include <time.h>

struct kevent {
    uintptr_t ident;
    int16_t filter;
    uint16_t flags;
    uint32_t fflags;
    intptr_t data;
    void *udata;
};


// As <os/lock.h> declares them (AdaptiveLock, which the selector guards its queue with).
typedef struct os_unfair_lock_s {
    uint32_t _os_unfair_lock_opaque;
} os_unfair_lock, *os_unfair_lock_t;
void os_unfair_lock_lock(os_unfair_lock_t lock);
void os_unfair_lock_unlock(os_unfair_lock_t lock);

int kqueue(void);
int kevent(int kq, const struct kevent *changelist, int nchanges, struct kevent *eventlist, int nevents,
           const struct timespec *timeout);
int close(int fildes);
// Read-only here: Swift code only reads errno, and a `let` import is concurrency-safe.
extern const int errno;

#define EVFILT_READ (-1)
#define EVFILT_WRITE (-2)
#define EVFILT_USER (-10)
#define EV_ADD 0x0001
#define EV_DELETE 0x0002
#define EV_CLEAR 0x0020
#define EV_RECEIPT 0x0040
#define EV_ERROR 0x4000
#define ENOENT 2
#define NOTE_TRIGGER 0x01000000
#define EINTR 4
