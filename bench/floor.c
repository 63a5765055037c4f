/*
 * floor: the fastest gateway libmosquitto allows, the baseline homegate is measured against.
 *
 * It subscribes to the command topics  B/<home>/<room>/<accessory>/<service>/<characteristic>/set/<account>
 * and republishes each payload, retained, to the state topic (the command topic without its last two
 * levels). No model, no validation, no database: whatever a real gateway adds costs time on top of this.
 *
 * usage: floor HOST PORT BASE_TOPIC QOS
 * Runs until SIGTERM or SIGINT.
 */
#include <mosquitto.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct relay {
    int qos;
    char filter[512];
};

static volatile sig_atomic_t stopping = 0;

static void on_signal(int signum)
{
    (void)signum;
    stopping = 1;
}

static void on_connect(struct mosquitto *mosq, void *context, int rc)
{
    struct relay *relay = context;
    if (rc != 0) {
        fprintf(stderr, "floor: connection refused: %s\n", mosquitto_connack_string(rc));
        return;
    }
    /* Subscribing on every connect also renews the subscription after a reconnect. */
    mosquitto_subscribe(mosq, NULL, relay->filter, relay->qos);
}

static void on_subscribe(struct mosquitto *mosq, void *context, int mid, int count, const int *granted)
{
    (void)mosq, (void)context, (void)mid, (void)count, (void)granted;
    /* The orchestrator waits for this line before it sends load. */
    printf("ready\n");
    fflush(stdout);
}

static void on_message(struct mosquitto *mosq, void *context, const struct mosquitto_message *message)
{
    struct relay *relay = context;
    char state[512];
    size_t length = strlen(message->topic);
    if (length >= sizeof state) return;
    memcpy(state, message->topic, length + 1);
    /* Drop "/set/<account>": cut at the second-to-last slash. */
    for (int levels = 0; levels < 2; levels++) {
        char *slash = strrchr(state, '/');
        if (!slash) return;
        *slash = '\0';
    }
    mosquitto_publish(mosq, NULL, state, message->payloadlen, message->payload, relay->qos, true);
}

int main(int argc, char **argv)
{
    if (argc != 5) {
        fprintf(stderr, "usage: floor HOST PORT BASE_TOPIC QOS\n");
        return 2;
    }
    struct relay relay = { .qos = atoi(argv[4]) };
    snprintf(relay.filter, sizeof relay.filter, "%s/+/+/+/+/+/set/+", argv[3]);

    signal(SIGTERM, on_signal);
    signal(SIGINT, on_signal);
    mosquitto_lib_init();
    struct mosquitto *mosq = mosquitto_new("homegate-floor", true, &relay);
    if (!mosq) {
        perror("floor: mosquitto_new");
        return 1;
    }
    mosquitto_int_option(mosq, MOSQ_OPT_TCP_NODELAY, 1);
    mosquitto_connect_callback_set(mosq, on_connect);
    mosquitto_subscribe_callback_set(mosq, on_subscribe);
    mosquitto_message_callback_set(mosq, on_message);
    int rc = mosquitto_connect(mosq, argv[1], atoi(argv[2]), 30);
    if (rc != MOSQ_ERR_SUCCESS) {
        fprintf(stderr, "floor: connect: %s\n", mosquitto_strerror(rc));
        return 1;
    }
    while (!stopping) {
        rc = mosquitto_loop(mosq, 100, 1);
        if (rc != MOSQ_ERR_SUCCESS && !stopping) {
            mosquitto_reconnect(mosq);
        }
    }
    mosquitto_disconnect(mosq);
    mosquitto_destroy(mosq);
    mosquitto_lib_cleanup();
    return 0;
}
