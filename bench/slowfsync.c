/*
 * slowfsync.so: an LD_PRELOAD library that makes the disk slow to acknowledge a sync, the way a hub's
 * SD card is, on a machine whose disk acknowledges fsync in microseconds.
 *
 * fsync, fdatasync and syncfs sleep SLOWFSYNC_MS milliseconds (10 by default; 0 sleeps not at all)
 * and then call the real function (dlsym(RTLD_NEXT)). Only the sync is slowed: writes, reads and
 * everything else go to the disk as they would. SQLite (in WAL mode with synchronous = FULL) syncs
 * through fsync or fdatasync of libc, so every commit pays the sleep once, a checkpoint more.
 *
 * With SLOWFSYNC_COUNTS=FILE the library counts the calls in FILE, shared by every thread and
 * readable while the process runs (it may be killed): five little-endian uint64, in order the
 * calls to fsync, fdatasync and syncfs, the nanoseconds slept, and the nanoseconds the real
 * functions took. `od -A n -t u8 FILE` prints them.
 *
 * build: cc -O2 -shared -fPIC -o slowfsync.so slowfsync.c -ldl
 * use:   LD_PRELOAD=/path/slowfsync.so SLOWFSYNC_MS=10 program ...
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

enum { COUNT_FSYNC, COUNT_FDATASYNC, COUNT_SYNCFS, SLEPT_NS, REAL_NS, COUNTERS };

static long long delay_ns = 10 * 1000000LL;
static uint64_t *counters;
static int (*real_fsync)(int), (*real_fdatasync)(int), (*real_syncfs)(int);

__attribute__((constructor)) static void slowfsync_init(void)
{
    const char *ms = getenv("SLOWFSYNC_MS");
    if (ms && *ms) delay_ns = (long long)(atof(ms) * 1e6);
    if (delay_ns < 0) delay_ns = 0;
    real_fsync = (int (*)(int))dlsym(RTLD_NEXT, "fsync");
    real_fdatasync = (int (*)(int))dlsym(RTLD_NEXT, "fdatasync");
    real_syncfs = (int (*)(int))dlsym(RTLD_NEXT, "syncfs");
    const char *path = getenv("SLOWFSYNC_COUNTS");
    if (path && *path) {
        int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
        if (fd >= 0) {
            if (ftruncate(fd, COUNTERS * sizeof(uint64_t)) == 0) {
                void *map = mmap(NULL, COUNTERS * sizeof(uint64_t), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
                if (map != MAP_FAILED) counters = map;
            }
            close(fd);
        }
    }
}

static long long monotonic_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (long long)t.tv_sec * 1000000000LL + t.tv_nsec;
}

static int slowed(int which, int (*real)(int), int fd)
{
    if (counters) __atomic_add_fetch(&counters[which], 1, __ATOMIC_RELAXED);
    if (delay_ns > 0) {
        /* The whole delay even if a signal interrupts the sleep; errno as the caller left it. */
        int saved = errno;
        struct timespec pause = { delay_ns / 1000000000LL, delay_ns % 1000000000LL };
        while (nanosleep(&pause, &pause) != 0 && errno == EINTR) {}
        errno = saved;
        if (counters) __atomic_add_fetch(&counters[SLEPT_NS], (uint64_t)delay_ns, __ATOMIC_RELAXED);
    }
    if (!real) {
        errno = ENOSYS;
        return -1;
    }
    long long started = counters ? monotonic_ns() : 0;
    int result = real(fd);
    if (counters) {
        int saved = errno;
        __atomic_add_fetch(&counters[REAL_NS], (uint64_t)(monotonic_ns() - started), __ATOMIC_RELAXED);
        errno = saved;
    }
    return result;
}

/* A call before the constructor ran (another library's constructor) looks the real function up itself. */
#define REAL(name) (real_##name ? real_##name : (real_##name = (int (*)(int))dlsym(RTLD_NEXT, #name)))

int fsync(int fd) { return slowed(COUNT_FSYNC, REAL(fsync), fd); }

int fdatasync(int fd) { return slowed(COUNT_FDATASYNC, REAL(fdatasync), fd); }

int syncfs(int fd) { return slowed(COUNT_SYNCFS, REAL(syncfs), fd); }
