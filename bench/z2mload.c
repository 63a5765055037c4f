/*
 * z2mload: plays zigbee2mqtt for the benchmark and times each device state update until the gateway
 * (homegate or bench/z2mfloor.c) publishes it on a retained topic.
 *
 * The network it plays: N Aqara WSDCGQ11LM temperature/humidity/pressure sensors, "sensor_000" ...,
 * each entry of bridge/devices a verbatim copy of the `weather_sensor` entry that zigbee2mqtt 2.12.1
 * published in its own tests (Sources/Zigbee2MQTTStandIn/Recordings/bridge-devices-z2m-test-startup.wire.txt), with
 * only friendly_name and ieee_address (0x<16 hex digits of the device's index>) made unique; the
 * recording's coordinator entry comes first, as zigbee2mqtt always lists it.
 *
 * Modes (-m):
 *   setup  publishes Z/bridge/state {"state":"online"} and Z/bridge/devices, both retained, as
 *          zigbee2mqtt does when it starts. With -A it then puts the devices into a home through
 *          homegate's requests (B/$request/ACCOUNT/...): waits until B/$discovered lists all N
 *          devices, then addHome HOME, addRoom "Room 1" ... (ROOM_SIZE devices each) and addAccessory
 *          for every device, named "sensor NNN" (homegate's names allow no "_", so the friendly name
 *          the driver offers is refused), and checks every answer.
 *   rate   publishes COUNT state updates at RATE per second, round robin over the devices, on
 *          Z/sensor_NNN (QoS 1, not retained, as zigbee2mqtt does by default), each the whole state
 *          with sorted keys: {"battery":..,"humidity":..,"linkquality":..,"pressure":..,
 *          "temperature":..,"voltage":..}. Every update changes the temperature: each device steps
 *          through 2,000 distinct values (15.00 ... 34.99 °C) from the one the gateway holds, so an
 *          answer names its update without ambiguity while fewer than 2,000 of one device are in flight.
 *          Answers (-k):
 *            homegate  B/HOME/Room r/sensor NNN/Temperature/CurrentTemperature, the value as text
 *            floor     B/sensor_NNN, the whole payload (its "temperature" is read)
 *          An update counts as lost when its value has not arrived TIMEOUT s after the last answer.
 *          With -D SECONDS the run ends at most SECONDS after the last update was sent, even while
 *          answers still come: what is unanswered then is "late", not lost (a gateway far behind the
 *          rate would otherwise keep the run going for as long as its backlog lasts).
 * Prints one JSON object on stdout.
 */
#define _GNU_SOURCE
#include "load.h"

#define FIRST_VALUE 1500 /* 15.00 °C, in hundredths */
#define VALUES 2000      /* distinct temperatures per device */

struct update {
    int device;
    int value; /* hundredths of a degree */
    bool answered;
    struct timespec sent;
};

struct device {
    int next;          /* the next value to send, or -1 before any is known */
    int last_sent;     /* -1 before one was sent */
    int last_seen;     /* the last value the gateway published, -1 before one was seen */
    int last_answered; /* index of the newest update answered, -1 before any */
    int *pending;      /* indexes of its unanswered updates, oldest first */
    int pending_count, pending_size;
    bool retained;
};

static struct {
    const char *host, *z2m, *base, *home, *account, *mode, *kind, *fixture;
    int port, devices, room_size, qos, count;
    double rate, timeout, drain_limit;
    bool add;
} options = {
    .host = "127.0.0.1", .z2m = "zigbee2mqtt", .base = "homegate", .home = "Zigbee", .account = "owner",
    .mode = "rate", .kind = "homegate", .fixture = "Sources/Zigbee2MQTTStandIn/Recordings/bridge-devices-z2m-test-startup.wire.txt",
    .port = 1883, .devices = 500, .room_size = 20, .qos = 1, .count = 10000, .rate = 2000, .timeout = 5,
};

static struct device *devices;
static struct update *updates;
static double *latencies;
static int answered, pending_total, overtaken, out_of_order, unexpected, published;
static struct timespec last_answer;

/* setup: what the gateway answered and listed */
static int discovered, answers, failures, home_answered = -1;

static int room_of(int device) { return device / options.room_size + 1; }

/* The device index of a topic naming "sensor_NNN" (zigbee2mqtt's name) or "sensor NNN" (the
 * accessory's), or -1. */
static int device_in(const char *text, size_t length)
{
    const char *found = memmem(text, length, "sensor", 6);
    if (!found || found + 7 >= text + length || (found[6] != '_' && found[6] != ' ')) return -1;
    int number = 0, digits = 0;
    for (const char *c = found + 7; c < text + length && *c >= '0' && *c <= '9'; c++, digits++) {
        number = number * 10 + (*c - '0');
    }
    return digits > 0 && number < options.devices ? number : -1;
}

/* A temperature in hundredths, from plain text or from the "temperature" of a JSON payload; -1 if none. */
static int value_in(const char *payload, int length)
{
    char text[4096];
    if (length <= 0 || length >= (int)sizeof text) return -1;
    memcpy(text, payload, length);
    text[length] = '\0';
    const char *number = text;
    if (strcmp(options.kind, "floor") == 0) {
        const char *key = strstr(text, "\"temperature\":");
        if (!key) return -1;
        number = key + 14;
    }
    char *end;
    double value = strtod(number, &end);
    if (end == number) return -1;
    return (int)(value * 100 + (value < 0 ? -0.5 : 0.5));
}

/* ---- the payloads zigbee2mqtt publishes ------------------------------------------------------ */

/* A number as JavaScript's JSON.stringify writes it: no trailing zeros, no trailing point. */
static void js_number(char *buffer, size_t size, double value, int decimals)
{
    snprintf(buffer, size, "%.*f", decimals, value);
    if (strchr(buffer, '.')) {
        char *end = buffer + strlen(buffer) - 1;
        while (*end == '0') *end-- = '\0';
        if (*end == '.') *end = '\0';
    }
}

static int state_payload(char *buffer, size_t size, int device, int value, int sequence)
{
    char humidity[32], pressure[32], temperature[32];
    js_number(humidity, sizeof humidity, 40 + (device % 300) / 10.0, 2);
    js_number(pressure, sizeof pressure, 1000 + (device % 250) / 10.0, 1);
    js_number(temperature, sizeof temperature, value / 100.0, 2);
    return snprintf(buffer, size,
                    "{\"battery\":%d,\"humidity\":%s,\"linkquality\":%d,\"pressure\":%s,\"temperature\":%s,"
                    "\"voltage\":%d}",
                    91 + device % 10, humidity, 60 + (device + sequence) % 120, pressure, temperature,
                    2985 + device % 20 * 5);
}

static char *read_file(const char *path, size_t *length)
{
    FILE *file = fopen(path, "rb");
    if (!file) {
        fprintf(stderr, "z2mload: %s: %s\n", path, strerror(errno));
        exit(1);
    }
    fseek(file, 0, SEEK_END);
    long size = ftell(file);
    fseek(file, 0, SEEK_SET);
    char *text = malloc(size + 1);
    if (fread(text, 1, size, file) != (size_t)size) {
        fprintf(stderr, "z2mload: cannot read %s\n", path);
        exit(1);
    }
    fclose(file);
    text[size] = '\0';
    *length = size;
    return text;
}

/* The element of the top-level JSON array `text` that contains `needle`, copied; exits if none. */
static char *array_element(const char *text, size_t length, const char *needle)
{
    int depth = 0;
    bool string = false, escaped = false;
    size_t start = 0;
    for (size_t i = 0; i < length; i++) {
        char c = text[i];
        if (string) {
            if (escaped) escaped = false;
            else if (c == '\\') escaped = true;
            else if (c == '"') string = false;
            continue;
        }
        if (c == '"') string = true;
        else if (c == '{' || c == '[') {
            if (depth++ == 1) start = i;
        } else if (c == '}' || c == ']') {
            if (--depth == 1) {
                size_t size = i + 1 - start;
                char *element = strndup(text + start, size);
                if (strstr(element, needle)) return element;
                free(element);
            }
        }
    }
    fprintf(stderr, "z2mload: no entry with %s in %s\n", needle, options.fixture);
    exit(1);
}

/* Replaces the one occurrence of `from` in `text` by `to`, into `out`; exits if it is not there once. */
static size_t replace_once(char *out, const char *text, const char *from, const char *to)
{
    const char *at = strstr(text, from);
    if (!at || strstr(at + 1, from)) {
        fprintf(stderr, "z2mload: %s is not in the weather_sensor entry exactly once\n", from);
        exit(1);
    }
    size_t before = at - text;
    memcpy(out, text, before);
    strcpy(out + before, to);
    strcat(out + before, at + strlen(from));
    return strlen(out);
}

/* bridge/devices: the coordinator, then one copy of weather_sensor per device. */
static char *devices_payload(size_t *length)
{
    size_t size;
    char *wire = read_file(options.fixture, &size);
    char *coordinator = array_element(wire, size, "\"type\":\"Coordinator\"");
    char *sensor = array_element(wire, size, "\"friendly_name\":\"weather_sensor\"");
    size_t capacity = strlen(coordinator) + (size_t)options.devices * (strlen(sensor) + 64) + 16;
    char *payload = malloc(capacity), *renamed = malloc(strlen(sensor) + 64), *copy = malloc(strlen(sensor) + 64);
    size_t used = (size_t)sprintf(payload, "[%s", coordinator);
    for (int i = 0; i < options.devices; i++) {
        char name[64], ieee[64];
        snprintf(name, sizeof name, "\"friendly_name\":\"sensor_%03d\"", i);
        snprintf(ieee, sizeof ieee, "\"ieee_address\":\"0x%016x\"", i);
        replace_once(renamed, sensor, "\"friendly_name\":\"weather_sensor\"", name);
        size_t n = replace_once(copy, renamed, "\"ieee_address\":\"0x0017880104e45522\"", ieee);
        payload[used++] = ',';
        memcpy(payload + used, copy, n);
        used += n;
    }
    payload[used++] = ']';
    payload[used] = '\0';
    *length = used;
    free(wire), free(coordinator), free(sensor), free(renamed), free(copy);
    return payload;
}

/* ---- MQTT -------------------------------------------------------------------------------------- */

static void on_connect(struct mosquitto *mosq, void *context, int rc)
{
    (void)context;
    if (rc != 0) {
        fprintf(stderr, "z2mload: connection refused: %s\n", mosquitto_connack_string(rc));
        return;
    }
    char filter[512];
    if (strcmp(options.mode, "setup") == 0) {
        if (!options.add) {
            pthread_mutex_lock(&lock);
            subscribed = 1;
            pthread_cond_broadcast(&changed);
            pthread_mutex_unlock(&lock);
            return;
        }
        char responses[512];
        snprintf(filter, sizeof filter, "%s/$discovered", options.base);
        snprintf(responses, sizeof responses, "%s/$response/%s", options.base, options.account);
        char *const filters[] = { filter, responses };
        mosquitto_subscribe_multiple(mosq, NULL, 2, filters, 1, 0, NULL);
    } else if (strcmp(options.kind, "floor") == 0) {
        snprintf(filter, sizeof filter, "%s/+", options.base);
        mosquitto_subscribe(mosq, NULL, filter, options.qos);
    } else {
        snprintf(filter, sizeof filter, "%s/%s/+/+/Temperature/CurrentTemperature", options.base, options.home);
        mosquitto_subscribe(mosq, NULL, filter, options.qos);
    }
}

static void on_publish(struct mosquitto *mosq, void *context, int mid)
{
    (void)mosq, (void)context, (void)mid;
    pthread_mutex_lock(&lock);
    published++;
    pthread_cond_broadcast(&changed);
    pthread_mutex_unlock(&lock);
}

static void setup_message(const struct mosquitto_message *message)
{
    const char *payload = message->payload;
    if (strstr(message->topic, "/$discovered")) {
        /* The devices it lists, by the number in their names: the driver offers "sensor 000" for the
         * friendly name "sensor_000" (earlier versions listed the friendly name itself). */
        static unsigned char *seen;
        if (!seen) seen = malloc(options.devices);
        memset(seen, 0, options.devices);
        int count = 0;
        const char *end = payload + message->payloadlen;
        for (const char *at = payload; at && (at = memmem(at, end - at, "\"sensor", 7)); at += 7) {
            int device = device_in(at, end - at < 16 ? (size_t)(end - at) : 16);
            if (device >= 0 && !seen[device]) {
                seen[device] = 1;
                count++;
            }
        }
        discovered = count;
        return;
    }
    struct answer answer = answer_in(message);
    if (!answer.ok) {
        if (failures < 5) fprintf(stderr, "z2mload: request %d failed: %s\n", answer.id, answer.text);
        failures++;
    }
    if (answer.id == 0) home_answered = answer.ok;
    else answers++;
}

static void on_message(struct mosquitto *mosq, void *context, const struct mosquitto_message *message)
{
    (void)mosq, (void)context;
    struct timespec arrival = now();
    pthread_mutex_lock(&lock);
    if (strcmp(options.mode, "setup") == 0) {
        setup_message(message);
        pthread_cond_broadcast(&changed);
        pthread_mutex_unlock(&lock);
        return;
    }
    int index = device_in(message->topic, strlen(message->topic));
    int value = value_in(message->payload, message->payloadlen);
    if (index < 0 || value < 0) {
        pthread_mutex_unlock(&lock);
        return;
    }
    struct device *device = &devices[index];
    if (message->retain) {
        /* Right after subscribing: the value the gateway holds. */
        if (!device->retained) retained_seen++;
        device->retained = true;
        device->last_seen = value;
        device->next = FIRST_VALUE + (value - FIRST_VALUE + 1 + VALUES) % VALUES;
        last_retained = arrival;
    } else {
        device->last_seen = value;
        int position = -1;
        for (int i = 0; i < device->pending_count; i++) {
            if (updates[device->pending[i]].value == value) {
                position = i;
                break;
            }
        }
        if (position < 0) {
            unexpected++;
        } else {
            int number = device->pending[position];
            struct update *update = &updates[number];
            update->answered = true;
            latencies[answered++] = seconds_between(update->sent, arrival) * 1000;
            overtaken += position; /* older updates of the device still waiting: overtaken by this one */
            if (number < device->last_answered) out_of_order++;
            else device->last_answered = number;
            memmove(device->pending + position, device->pending + position + 1,
                    (device->pending_count - position - 1) * sizeof *device->pending);
            device->pending_count--;
            pending_total--;
            last_answer = arrival;
        }
    }
    pthread_cond_broadcast(&changed);
    pthread_mutex_unlock(&lock);
}

/* ---- modes ------------------------------------------------------------------------------------- */

static void request(struct mosquitto *mosq, const char *operation, const char *body)
{
    char topic[512];
    snprintf(topic, sizeof topic, "%s/$request/%s/%s", options.base, options.account, operation);
    mosquitto_publish(mosq, NULL, topic, (int)strlen(body), body, 1, false);
}

/* Waits until `*counter` reaches `target`, giving up after `seconds` without progress. */
static bool wait_for(int *counter, int target, double seconds)
{
    struct timespec progress = now();
    int last = *counter;
    while (*counter < target) {
        wait_changed(0.1);
        if (*counter != last) {
            last = *counter;
            progress = now();
        } else if (seconds_between(progress, now()) > seconds) {
            return false;
        }
    }
    return true;
}

static int run_setup(struct mosquitto *mosq)
{
    struct timespec start = now();
    char topic[512];
    const char *online = "{\"state\":\"online\"}";
    size_t length;
    char *list = devices_payload(&length);
    snprintf(topic, sizeof topic, "%s/bridge/state", options.z2m);
    mosquitto_publish(mosq, NULL, topic, (int)strlen(online), online, 1, true);
    snprintf(topic, sizeof topic, "%s/bridge/devices", options.z2m);
    mosquitto_publish(mosq, NULL, topic, (int)length, list, 1, true);
    free(list);
    if (!wait_for(&published, 2, 30)) {
        fprintf(stderr, "z2mload: the broker did not acknowledge bridge/state and bridge/devices\n");
        return 1;
    }
    int rooms = (options.devices + options.room_size - 1) / options.room_size, added = 0;
    if (options.add) {
        if (!wait_for(&discovered, options.devices, 120)) {
            fprintf(stderr, "z2mload: %s/$discovered lists %d of %d devices\n", options.base, discovered,
                    options.devices);
            return 1;
        }
        char body[1024];
        snprintf(body, sizeof body, "{\"id\":0,\"name\":\"%s\"}", options.home);
        /* The gateway may still be subscribing: ask again until it answers. */
        for (int attempt = 0; home_answered < 0 && attempt < 10; attempt++) {
            request(mosq, "addHome", body);
            struct timespec asked = now();
            while (home_answered < 0 && seconds_between(asked, now()) < 3) wait_changed(0.1);
        }
        if (home_answered != 1) {
            fprintf(stderr, "z2mload: addHome %s was not accepted\n", options.home);
            return 1;
        }
        for (int r = 1; r <= rooms; r++) {
            snprintf(body, sizeof body, "{\"id\":%d,\"name\":\"Room %d\",\"home\":\"%s\"}", r, r, options.home);
            request(mosq, "addRoom", body);
        }
        if (!wait_for(&answers, rooms, 30) || failures > 0) {
            fprintf(stderr, "z2mload: addRoom: %d answers of %d, %d failed\n", answers, rooms, failures);
            return 1;
        }
        for (int i = 0; i < options.devices; i++) {
            snprintf(body, sizeof body,
                     "{\"id\":%d,\"accessory\":\"0x%016x\",\"home\":\"%s\",\"room\":\"Room %d\","
                     "\"name\":\"sensor %03d\"}",
                     1000 + i, i, options.home, room_of(i), i);
            request(mosq, "addAccessory", body);
        }
        if (!wait_for(&answers, rooms + options.devices, 60) || failures > 0) {
            fprintf(stderr, "z2mload: addAccessory: %d answers of %d, %d failed\n", answers - rooms,
                    options.devices, failures);
            return 1;
        }
        added = options.devices;
    }
    printf("{\"mode\":\"setup\",\"devices\":%d,\"bridge_devices_bytes\":%zu,\"rooms\":%d,\"added\":%d,"
           "\"setup_ms\":%.0f}\n",
           options.devices, length, options.add ? rooms : 0, added, seconds_between(start, now()) * 1000);
    return 0;
}

/* Says on stderr where the unanswered updates were in the run: one burst, or spread over it. */
static void report_unanswered(struct timespec start, int sent)
{
    int first = -1, last = -1, devices_hit = 0;
    for (int i = 0; i < sent; i++) {
        if (updates[i].answered || (updates[i].sent.tv_sec == 0 && updates[i].sent.tv_nsec == 0)) continue;
        if (first < 0) first = i;
        last = i;
    }
    if (first < 0) return;
    for (int d = 0; d < options.devices; d++) devices_hit += devices[d].pending_count > 0;
    fprintf(stderr,
            "z2mload: %d updates unanswered, of %d devices; the first sent %.3f s into the run (update %d),"
            " the last %.3f s (update %d)\n",
            pending_total, devices_hit, seconds_between(start, updates[first].sent), first,
            seconds_between(start, updates[last].sent), last);
}

static int run_rate(struct mosquitto *mosq)
{
    await_retained(options.devices);
    char topic[512], payload[512];
    struct timespec start = now();
    last_answer = start;
    int cursor = 0;
    for (int i = 0; i < options.count; i++) {
        pace(start, i / options.rate);
        struct device *device = &devices[cursor];
        if (device->pending_count >= VALUES - 1) {
            fprintf(stderr, "z2mload: sensor_%03d has %d updates in flight; stopping\n", cursor,
                    device->pending_count);
            break;
        }
        if (device->next < 0) device->next = FIRST_VALUE;
        struct update *update = &updates[i];
        *update = (struct update){ .device = cursor, .value = device->next };
        device->next = FIRST_VALUE + (device->next - FIRST_VALUE + 1) % VALUES;
        device->last_sent = update->value;
        if (device->pending_count == device->pending_size) {
            device->pending_size = device->pending_size ? device->pending_size * 2 : 8;
            device->pending = realloc(device->pending, device->pending_size * sizeof *device->pending);
        }
        device->pending[device->pending_count++] = i;
        pending_total++;
        snprintf(topic, sizeof topic, "%s/sensor_%03d", options.z2m, cursor);
        int length = state_payload(payload, sizeof payload, cursor, update->value, i / options.devices);
        update->sent = now();
        mosquitto_publish(mosq, NULL, topic, length, payload, options.qos, false);
        cursor = (cursor + 1) % options.devices;
    }
    int sent = options.count;
    double sending = seconds_between(start, now());
    /* Drain: until every update is answered or none was for TIMEOUT seconds (or DRAIN_LIMIT passed). */
    struct timespec waiting = now();
    bool cut = false;
    while (pending_total > 0) {
        wait_changed(0.1);
        struct timespec t = now();
        struct timespec latest = seconds_between(last_answer, waiting) > 0 ? waiting : last_answer;
        if (seconds_between(latest, t) >= options.timeout) break;
        if (options.drain_limit > 0 && seconds_between(waiting, t) >= options.drain_limit) {
            cut = seconds_between(last_answer, t) < options.timeout;
            break;
        }
    }
    /* A device whose topic does not hold the last value sent ends the run stale. */
    int stale = 0;
    for (int d = 0; d < options.devices; d++) {
        if (devices[d].last_sent >= 0 && devices[d].last_seen != devices[d].last_sent) stale++;
    }
    report_unanswered(start, sent);
    double span = seconds_between(start, last_answer);
    qsort(latencies, answered, sizeof *latencies, compare_doubles);
    printf("{\"mode\":\"rate\",\"qos\":%d,\"devices\":%d,\"rate\":%.0f,\"sent\":%d,\"answered\":%d,\"lost\":%d,"
           "\"late\":%d,\"stale\":%d,\"overtaken\":%d,\"out_of_order\":%d,\"unexpected\":%d,\"elapsed_s\":%.3f,"
           "\"offered\":%.1f,\"throughput\":%.1f,\"p50_ms\":%.3f,\"p90_ms\":%.3f,\"p99_ms\":%.3f,"
           "\"max_ms\":%.3f}\n",
           options.qos, options.devices, options.rate, sent, answered, cut ? 0 : pending_total, cut ? pending_total : 0,
           cut ? 0 : stale, overtaken, out_of_order,
           unexpected, sending, sending > 0 ? sent / sending : 0, span > 0 ? answered / span : 0,
           percentile(latencies, answered, 0.5), percentile(latencies, answered, 0.9),
           percentile(latencies, answered, 0.99), answered ? latencies[answered - 1] : 0);
    return 0;
}

static void usage(void)
{
    fprintf(stderr,
            "usage: z2mload [-h host] [-p port] [-z zigbee2mqtt base] [-b gateway base] [-k homegate|floor]\n"
            "               [-H home] [-u account] [-n devices] [-r room size] [-q qos] [-m setup|rate] [-A]\n"
            "               [-R rate] [-c count] [-t timeout s] [-D drain limit s] [-f bridge-devices fixture]\n");
    exit(2);
}

int main(int argc, char **argv)
{
    int option;
    while ((option = getopt(argc, argv, "h:p:z:b:k:H:u:n:r:q:m:AR:c:t:D:f:")) != -1) {
        switch (option) {
        case 'h': options.host = optarg; break;
        case 'p': options.port = atoi(optarg); break;
        case 'z': options.z2m = optarg; break;
        case 'b': options.base = optarg; break;
        case 'k': options.kind = optarg; break;
        case 'H': options.home = optarg; break;
        case 'u': options.account = optarg; break;
        case 'n': options.devices = atoi(optarg); break;
        case 'r': options.room_size = atoi(optarg); break;
        case 'q': options.qos = atoi(optarg); break;
        case 'm': options.mode = optarg; break;
        case 'A': options.add = true; break;
        case 'R': options.rate = atof(optarg); break;
        case 'c': options.count = atoi(optarg); break;
        case 't': options.timeout = atof(optarg); break;
        case 'D': options.drain_limit = atof(optarg); break;
        case 'f': options.fixture = optarg; break;
        default: usage();
        }
    }
    if (options.devices < 1 || options.devices > 1000 || options.room_size < 1 || options.count < 1 ||
        options.rate <= 0 || (strcmp(options.kind, "homegate") != 0 && strcmp(options.kind, "floor") != 0) ||
        (strcmp(options.mode, "setup") != 0 && strcmp(options.mode, "rate") != 0)) {
        usage();
    }

    devices = calloc(options.devices, sizeof *devices);
    updates = calloc(options.count, sizeof *updates);
    latencies = calloc(options.count, sizeof *latencies);
    for (int i = 0; i < options.devices; i++) {
        devices[i] = (struct device){ .next = -1, .last_sent = -1, .last_seen = -1, .last_answered = -1 };
    }

    struct load_callbacks callbacks = { .on_connect = on_connect, .on_publish = on_publish, .on_message = on_message };
    struct mosquitto *mosq = load_start("z2mload", options.host, options.port, callbacks);
    if (!mosq) return 1;
    int status = strcmp(options.mode, "setup") == 0 ? run_setup(mosq) : run_rate(mosq);
    load_stop(mosq);
    return status;
}
