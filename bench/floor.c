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
#include "relay.h"

static void on_message(struct mosquitto *mosq, void *context, const struct mosquitto_message *message)
{
    const struct relay_subscription *subscription = context;
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
    mosquitto_publish(mosq, NULL, state, message->payloadlen, message->payload, subscription->qos, true);
}

int main(int argc, char **argv)
{
    if (argc != 5) {
        fprintf(stderr, "usage: floor HOST PORT BASE_TOPIC QOS\n");
        return 2;
    }
    struct relay_subscription subscription = { .name = "floor", .qos = atoi(argv[4]) };
    snprintf(subscription.filter, sizeof subscription.filter, "%s/+/+/+/+/+/set/+", argv[3]);
    return relay_run(&subscription, argv[1], argv[2], on_message);
}
