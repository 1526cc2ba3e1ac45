#include "CEpoll.h"
int cepoll_available(void) { return 1; }
