/*
 * load.h: what the two load generators (loadgen.c, z2mload.c) share.
 *
 * Both run libmosquitto's network thread beside their own: its callbacks update the program's state
 * under `lock` and broadcast `changed`, and the main thread, holding `lock`, waits on `changed` for the
 * answers it times. Here are that lock, the clock, the client's start and stop, the pacing of a rate,
 * the percentiles of the latencies, and the reading of an answer to a request.
 */
#ifndef HOMEGATE_BENCH_LOAD_H
#define HOMEGATE_BENCH_LOAD_H

#include <errno.h>
#include <mosquitto.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* ---- what the network thread and the main thread share ---------------------------------------- */

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t changed = PTHREAD_COND_INITIALIZER;
static int subscribed;               /* the broker granted the subscription (or none is needed) */
static int retained_seen;            /* topics whose retained value arrived, counted by on_message */
static struct timespec last_retained; /* when the last retained value (or the SUBACK) arrived */

static double seconds_between(struct timespec from, struct timespec to)
{
    return (double)(to.tv_sec - from.tv_sec) + (double)(to.tv_nsec - from.tv_nsec) / 1e9;
}

static struct timespec now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t;
}

/* Waits on `changed` for at most `seconds`; returns false on timeout. Called with `lock` held. */
static bool wait_changed(double seconds)
{
    struct timespec deadline;
    clock_gettime(CLOCK_REALTIME, &deadline);
    long long ns = deadline.tv_nsec + (long long)(seconds * 1e9);
    deadline.tv_sec += ns / 1000000000;
    deadline.tv_nsec = ns % 1000000000;
    return pthread_cond_timedwait(&changed, &lock, &deadline) != ETIMEDOUT;
}

/* Sleeps, with `lock` released, until `due` seconds after `start`: a rate's next send. Called with
 * `lock` held. */
static void pace(struct timespec start, double due)
{
    for (;;) {
        double late = seconds_between(start, now()) - due;
        if (late >= 0) break;
        pthread_mutex_unlock(&lock);
        struct timespec pause = { 0, (long)(-late * 1e9) };
        nanosleep(&pause, NULL);
        pthread_mutex_lock(&lock);
    }
}

/* Lets the retained values arrive after subscribing: all `expected` of them, or none for 300 ms.
 * Called with `lock` held. */
static void await_retained(int expected)
{
    while (retained_seen < expected && seconds_between(last_retained, now()) < 0.3) wait_changed(0.05);
}

/* ---- the client ------------------------------------------------------------------------------- */

static void on_subscribe(struct mosquitto *mosq, void *context, int mid, int count, const int *granted)
{
    (void)mosq, (void)context, (void)mid, (void)count, (void)granted;
    pthread_mutex_lock(&lock);
    subscribed = 1;
    last_retained = now();
    pthread_cond_broadcast(&changed);
    pthread_mutex_unlock(&lock);
}

/* The program's own callbacks; `on_publish` may be NULL. */
struct load_callbacks {
    void (*on_connect)(struct mosquitto *, void *, int);
    void (*on_publish)(struct mosquitto *, void *, int);
    void (*on_message)(struct mosquitto *, void *, const struct mosquitto_message *);
};

/* Connects as "homegate-NAME-<pid>", starts the network thread and waits until `subscribed`; returns
 * the client with `lock` held, or NULL after saying why on stderr. */
static struct mosquitto *load_start(const char *name, const char *host, int port, struct load_callbacks callbacks)
{
    mosquitto_lib_init();
    char id[64];
    snprintf(id, sizeof id, "homegate-%s-%d", name, getpid());
    struct mosquitto *mosq = mosquitto_new(id, true, NULL);
    if (!mosq) {
        fprintf(stderr, "%s: mosquitto_new: %s\n", name, strerror(errno));
        return NULL;
    }
    mosquitto_int_option(mosq, MOSQ_OPT_TCP_NODELAY, 1);
    /* The instrument must not be what limits the window: no client-side cap on QoS 1 in flight. */
    mosquitto_int_option(mosq, MOSQ_OPT_SEND_MAXIMUM, 65535);
    mosquitto_connect_callback_set(mosq, callbacks.on_connect);
    mosquitto_subscribe_callback_set(mosq, on_subscribe);
    mosquitto_publish_callback_set(mosq, callbacks.on_publish);
    mosquitto_message_callback_set(mosq, callbacks.on_message);
    int rc = mosquitto_connect(mosq, host, port, 30);
    if (rc == MOSQ_ERR_SUCCESS) rc = mosquitto_loop_start(mosq);
    if (rc != MOSQ_ERR_SUCCESS) {
        fprintf(stderr, "%s: connect: %s\n", name, mosquitto_strerror(rc));
        return NULL;
    }
    pthread_mutex_lock(&lock);
    while (!subscribed) {
        if (!wait_changed(10)) {
            fprintf(stderr, "%s: no CONNACK or SUBACK from the broker\n", name);
            return NULL;
        }
    }
    return mosq;
}

/* Releases `lock`, flushes what the program printed and disconnects. */
static void load_stop(struct mosquitto *mosq)
{
    pthread_mutex_unlock(&lock);
    fflush(stdout);
    mosquitto_disconnect(mosq);
    mosquitto_loop_stop(mosq, false);
    mosquitto_destroy(mosq);
    mosquitto_lib_cleanup();
}

/* ---- results ---------------------------------------------------------------------------------- */

static int compare_doubles(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The `p` percentile (0...1) of `count` latencies sorted ascending; 0 when there are none. */
static double percentile(const double *sorted, int count, double p)
{
    if (count == 0) return 0;
    return sorted[(int)(p * (count - 1) + 0.5)];
}

/* An answer to a request on B/$response/ACCOUNT: {"id":…,"ok":true|false,…}. */
struct answer {
    bool has_id;
    int id;
    bool ok;
    char text[2048]; /* the payload, cut to fit, for saying why a request failed */
};

static struct answer answer_in(const struct mosquitto_message *message)
{
    struct answer answer;
    int length = message->payloadlen < (int)sizeof answer.text - 1 ? message->payloadlen : (int)sizeof answer.text - 1;
    memcpy(answer.text, message->payload, length);
    answer.text[length] = '\0';
    const char *id = strstr(answer.text, "\"id\":");
    answer.has_id = id != NULL;
    answer.id = id ? atoi(id + 5) : -1;
    answer.ok = strstr(answer.text, "\"ok\":true") != NULL;
    return answer;
}

#endif
