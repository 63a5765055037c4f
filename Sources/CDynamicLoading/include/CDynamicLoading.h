#ifndef HOMEGATE_CDYNAMICLOADING_H
#define HOMEGATE_CDYNAMICLOADING_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>

#pragma clang assume_nonnull begin

/*
 * A shared library loaded with dlopen on first use, its functions looked up into a table: for the
 * libraries only some configurations need (libmosquitto for TLS, Avahi for HomeKit discovery), so
 * a gateway that does not use them never maps them, nor what they link.
 */
struct homegate_lazy_library {
    const char *file;
    const char *_Nonnull const *_Nonnull names;
    size_t count;
    /* The table: `count` function pointers, filled in the order of `names`. */
    void *_Nullable *_Nonnull table;
    pthread_mutex_t lock;
    bool tried;
    bool loaded;
    char failure[512];
};

#define HOMEGATE_LAZY_LIBRARY(file, names, table)                                                           \
    {(file), (names), sizeof(names) / sizeof *(names), (void **)(table), PTHREAD_MUTEX_INITIALIZER, false, false, ""}

/*
 * Loads the library once (thread-safe): true when every function was found; false with
 * `*failure` set to why (dlerror's text), also on every later call.
 */
bool homegate_lazy_load(struct homegate_lazy_library *library, const char *_Nullable *_Nonnull failure);

#pragma clang assume_nonnull end

#endif
