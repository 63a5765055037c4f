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
#include "relay.h"

struct relay {
    struct relay_subscription subscription; /* first: the context relay.h's callbacks read */
    size_t z2m_length;
    char base[256];
};

static void on_message(struct mosquitto *mosq, void *context, const struct mosquitto_message *message)
{
    struct relay *relay = context;
    char topic[512];
    /* Z/<friendly_name> → B/<friendly_name> */
    if (snprintf(topic, sizeof topic, "%s%s", relay->base, message->topic + relay->z2m_length) >= (int)sizeof topic) {
        return;
    }
    mosquitto_publish(mosq, NULL, topic, message->payloadlen, message->payload, relay->subscription.qos, true);
}

int main(int argc, char **argv)
{
    if (argc != 6) {
        fprintf(stderr, "usage: z2mfloor HOST PORT Z2M_BASE_TOPIC BASE_TOPIC QOS\n");
        return 2;
    }
    struct relay relay = {
        .subscription = { .name = "z2mfloor", .qos = atoi(argv[5]) },
        .z2m_length = strlen(argv[3]),
    };
    snprintf(relay.subscription.filter, sizeof relay.subscription.filter, "%s/+", argv[3]);
    snprintf(relay.base, sizeof relay.base, "%s", argv[4]);
    return relay_run(&relay.subscription, argv[1], argv[2], on_message);
}
