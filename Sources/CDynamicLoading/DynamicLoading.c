#include "CDynamicLoading.h"

#include <dlfcn.h>
#include <stdio.h>

static void load(struct homegate_lazy_library *library)
{
    void *handle = dlopen(library->file, RTLD_NOW | RTLD_LOCAL);
    if (handle == NULL) {
        snprintf(library->failure, sizeof library->failure, "%s", dlerror());
        return;
    }
    /* dlsym on the handle also searches what the library depends on. */
    for (size_t index = 0; index < library->count; index++) {
        library->table[index] = dlsym(handle, library->names[index]);
        if (library->table[index] == NULL) {
            snprintf(library->failure, sizeof library->failure, "%s", dlerror());
            return;
        }
    }
    library->loaded = true;
}

bool homegate_lazy_load(struct homegate_lazy_library *library, const char **failure)
{
    pthread_mutex_lock(&library->lock);
    if (!library->tried) {
        library->tried = true;
        load(library);
    }
    bool loaded = library->loaded;
    pthread_mutex_unlock(&library->lock);
    *failure = loaded ? NULL : library->failure;
    return loaded;
}
