// The declarations are in include/CFuzzer.h; libFuzzer defines them when linked with -sanitize=fuzzer.
#include "CFuzzer.h"
