/* glibc's malloc.h, which Swift's Glibc module leaves out: `malloc_trim`, for the gateway to give
 * the heap's free pages back to the system when its loop comes to rest. */
#include <malloc.h>
