// The system calls of Switchboard's event loops that Glibc's module does not export:
// epoll and eventfd on Linux. Apple platforms use kqueue from Darwin and need nothing here.
#ifndef CSWITCHBOARD_IO_H
#define CSWITCHBOARD_IO_H

#if defined(__linux__)
#include <sys/epoll.h>
#include <sys/eventfd.h>
#endif

/// Always 1: lets the module build on every platform, with or without the headers above.
int sb_io_available(void);

#endif
