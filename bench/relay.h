/*
 * relay.h: what the two floors (floor.c, z2mfloor.c) share: the fastest relay libmosquitto allows.
 *
 * A relay subscribes to one filter, prints "ready" once the broker granted it, and hands every message
 * to the program's own callback, which republishes it; it runs until SIGTERM or SIGINT. Only what the
 * relay does with a message differs between the floors, so that is all each program writes.
 */
#ifndef HOMEGATE_BENCH_RELAY_H
#define HOMEGATE_BENCH_RELAY_H

#include <errno.h>
#include <mosquitto.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* What a relay subscribes to, and the context of every callback. A program with more state
 * (z2mfloor) embeds it as its first member, so relay.h's callbacks and the program's message callback
 * share one context pointer. */
struct relay_subscription {
    const char *name; /* the program's name: its messages' prefix, and its client id after "homegate-" */
    int qos;
    char filter[512];
};

static volatile sig_atomic_t relay_stopping = 0;

static void relay_on_signal(int signum)
{
    (void)signum;
    relay_stopping = 1;
}

static void relay_on_connect(struct mosquitto *mosq, void *context, int rc)
{
    const struct relay_subscription *subscription = context;
    if (rc != 0) {
        fprintf(stderr, "%s: connection refused: %s\n", subscription->name, mosquitto_connack_string(rc));
        return;
    }
    /* Subscribing on every connect also renews the subscription after a reconnect. */
    mosquitto_subscribe(mosq, NULL, subscription->filter, subscription->qos);
}

static void relay_on_subscribe(struct mosquitto *mosq, void *context, int mid, int count, const int *granted)
{
    (void)mosq, (void)context, (void)mid, (void)count, (void)granted;
    /* The orchestrator waits for this line before it sends load. */
    printf("ready\n");
    fflush(stdout);
}

/* Connects to HOST:PORT and relays until SIGTERM or SIGINT, reconnecting when the connection drops;
 * `on_message` gets `subscription` as its context. Returns the program's exit status. */
static int relay_run(struct relay_subscription *subscription, const char *host, const char *port,
                     void (*on_message)(struct mosquitto *, void *, const struct mosquitto_message *))
{
    signal(SIGTERM, relay_on_signal);
    signal(SIGINT, relay_on_signal);
    mosquitto_lib_init();
    char id[64];
    snprintf(id, sizeof id, "homegate-%s", subscription->name);
    struct mosquitto *mosq = mosquitto_new(id, true, subscription);
    if (!mosq) {
        fprintf(stderr, "%s: mosquitto_new: %s\n", subscription->name, strerror(errno));
        return 1;
    }
    mosquitto_int_option(mosq, MOSQ_OPT_TCP_NODELAY, 1);
    mosquitto_connect_callback_set(mosq, relay_on_connect);
    mosquitto_subscribe_callback_set(mosq, relay_on_subscribe);
    mosquitto_message_callback_set(mosq, on_message);
    int rc = mosquitto_connect(mosq, host, atoi(port), 30);
    if (rc != MOSQ_ERR_SUCCESS) {
        fprintf(stderr, "%s: connect: %s\n", subscription->name, mosquitto_strerror(rc));
        return 1;
    }
    while (!relay_stopping) {
        rc = mosquitto_loop(mosq, 100, 1);
        if (rc != MOSQ_ERR_SUCCESS && !relay_stopping) {
            mosquitto_reconnect(mosq);
        }
    }
    mosquitto_disconnect(mosq);
    mosquitto_destroy(mosq);
    mosquitto_lib_cleanup();
    return 0;
}

#endif
