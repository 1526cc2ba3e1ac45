#define _GNU_SOURCE
#include "CSwitchboardIO.h"
#if defined(__linux__)
#include <stddef.h>
#include <sys/socket.h>
#include <pthread.h>
#endif

int sb_io_available(void) { return 1; }

#if defined(__linux__)
int sb_accept_cloexec(int listener) { return accept4(listener, NULL, NULL, SOCK_CLOEXEC); }
int sb_socket_cloexec(int domain, int type, int protocol) { return socket(domain, type | SOCK_CLOEXEC, protocol); }
#endif

#if defined(__linux__)
int sb_name_thread(const char *name) { return pthread_setname_np(pthread_self(), name); }
#endif
