#include "CSwitchboardIO.h"

int sb_io_available(void) { return 1; }
