// epoll for the benchmarks' own epoll echo server (Glibc's module does not export it).
#ifndef CEPOLL_H
#define CEPOLL_H
#if defined(__linux__)
#include <sys/epoll.h>
#endif
int cepoll_available(void);
#endif
