/*
 * z2mfloor: the floor for zigbee2mqtt's state updates, the fastest relay libmosquitto allows.
 *
 * It subscribes to zigbee2mqtt's device state topics  Z/<friendly_name>  (Z/+: the bridge's topics
 * have two levels and do not match) and republishes each payload as it is, retained, to
 * B/<friendly_name>. No parsing, no model, no database: whatever a real gateway does with a state
 * update (reading the JSON, mapping it to characteristics, recording it, publishing its topics) costs
 * time on top of this.
 *
 * usage: z2mfloor HOST PORT Z2M_BASE_TOPIC BASE_TOPIC QOS
 * Prints "ready" once subscribed; runs until SIGTERM or SIGINT.
 */
#include <mosquitto.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct relay {
    int qos;
    size_t z2m_length;
    char filter[512], base[256];
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
        fprintf(stderr, "z2mfloor: connection refused: %s\n", mosquitto_connack_string(rc));
        return;
    }
    mosquitto_subscribe(mosq, NULL, relay->filter, relay->qos);
}

static void on_subscribe(struct mosquitto *mosq, void *context, int mid, int count, const int *granted)
{
    (void)mosq, (void)context, (void)mid, (void)count, (void)granted;
    printf("ready\n");
    fflush(stdout);
}

static void on_message(struct mosquitto *mosq, void *context, const struct mosquitto_message *message)
{
    struct relay *relay = context;
    char topic[512];
    /* Z/<friendly_name> → B/<friendly_name> */
    if (snprintf(topic, sizeof topic, "%s%s", relay->base, message->topic + relay->z2m_length) >= (int)sizeof topic) {
        return;
    }
    mosquitto_publish(mosq, NULL, topic, message->payloadlen, message->payload, relay->qos, true);
}

int main(int argc, char **argv)
{
    if (argc != 6) {
        fprintf(stderr, "usage: z2mfloor HOST PORT Z2M_BASE_TOPIC BASE_TOPIC QOS\n");
        return 2;
    }
    struct relay relay = { .qos = atoi(argv[5]), .z2m_length = strlen(argv[3]) };
    snprintf(relay.filter, sizeof relay.filter, "%s/+", argv[3]);
    snprintf(relay.base, sizeof relay.base, "%s", argv[4]);

    signal(SIGTERM, on_signal);
    signal(SIGINT, on_signal);
    mosquitto_lib_init();
    struct mosquitto *mosq = mosquitto_new("homegate-z2mfloor", true, &relay);
    if (!mosq) {
        perror("z2mfloor: mosquitto_new");
        return 1;
    }
    mosquitto_int_option(mosq, MOSQ_OPT_TCP_NODELAY, 1);
    mosquitto_connect_callback_set(mosq, on_connect);
    mosquitto_subscribe_callback_set(mosq, on_subscribe);
    mosquitto_message_callback_set(mosq, on_message);
    int rc = mosquitto_connect(mosq, argv[1], atoi(argv[2]), 30);
    if (rc != MOSQ_ERR_SUCCESS) {
        fprintf(stderr, "z2mfloor: connect: %s\n", mosquitto_strerror(rc));
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
