// The system calls of Switchboard's event loops that Glibc's module does not export:
// epoll, eventfd, accept4 and pthread_setname_np on Linux. Apple platforms use kqueue from Darwin and need nothing here.
#ifndef CSWITCHBOARD_IO_H
#define CSWITCHBOARD_IO_H

#if defined(__linux__)
#include <sys/epoll.h>
#include <sys/eventfd.h>
#endif

/// Always 1: lets the module build on every platform, with or without the headers above.
int sb_io_available(void);

#if defined(__linux__)
/// accept4 with SOCK_CLOEXEC: the connection is never inheritable, not even for the moment
/// between accept and fcntl (Glibc's module hides accept4 behind _GNU_SOURCE).
int sb_accept_cloexec(int listener);
/// socket with SOCK_CLOEXEC, for the same reason.
int sb_socket_cloexec(int domain, int type, int protocol);
/// Names the calling thread (at most 15 bytes and the NUL), as `top -H` and debuggers show it.
int sb_name_thread(const char *name);
#endif

#endif
