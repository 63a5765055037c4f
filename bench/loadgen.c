/*
 * loadgen: drives a gateway (homegate or the floor) with characteristic writes and times each one
 * until the gateway publishes the new state.
 *
 * The home it expects (bench/make-home.sh writes it): accessories "Switch 1" ... "Switch N" in rooms
 * "Room 1", "Room 2", ... of ROOM_SIZE accessories each, in home HOME, each with service "Switch",
 * characteristic "On". A write goes to  B/HOME/Room r/Switch k/Switch/On/set/ACCOUNT  and is answered
 * on  B/HOME/Room r/Switch k/Switch/On . A gateway publishes a value only when it changes, so every
 * write flips the accessory's last known value, and an accessory has at most one write in flight, so
 * a state message is matched to its write without ambiguity.
 *
 * Modes (-m):
 *   rate     COUNT writes at RATE per second (-R), round robin over the accessories
 *   window   COUNT writes keeping WINDOW (-w) in flight: the maximum sustained throughput
 *   paired   the gateways of the base topics -B BASE,BASE[,...] (2 to 4, each with the home) in turns:
 *            COUNT sets of one block of BLOCK (-s) seconds per gateway at RATE per second, the
 *            order within a set cycling through every permutation, after WARM (-W) sets not timed;
 *            with -G GAP, the next block starts GAP seconds later than back to back (traffic in
 *            bursts; a block that ran late, its gateway holding every accessory in flight, shortens
 *            the gap after it).
 *            One pace for the whole run, so the rate stays exact across the switches; a write belongs
 *            to the block it was sent in, whichever block its answer comes in. The gateways share the
 *            machine's state of the moment block by block: for comparing them under a load that
 *            drifts (bench/tail.py pools the blocks and bootstraps whole sets)
 *   startup  print "ready", then wait until the gateway published all N value topics (what the broker
 *            held retained before does not count); prints when (CLOCK_REALTIME)
 *   actionset  run action sets ACTION_ON / ACTION_OFF (-a, -A) COUNT times, timing until all of the
 *            first FIFTY (-F) switches published their new value
 *   layout   COUNT addRoom requests (B/$request/ACCOUNT/addRoom) to HOME, one after another, each sent
 *            when the one before was answered on B/$response/ACCOUNT, timing each until its answer.
 *            The rooms are named "Layout <pid> <k>", so runs against one database do not collide. A
 *            layout change is on disk before its answer: the time is at least one commit's fsync.
 *            With -S COUNTS (the counts file of bench/slowfsync.c's SLOWFSYNC_COUNTS) it also counts
 *            the requests during which the gateway synced at least once before the answer came.
 * Prints one JSON object on stdout. With -o FILE (rate and window) it also writes each answered write's
 * latency in ms to FILE, one a line, in the order the answers came; in paired mode a line is
 * "SET SLOT GATEWAY LATENCY": the set, the block's place in it, the gateway's place in -B.
 */
#define _GNU_SOURCE
#include "load.h"

struct accessory {
    int value;         /* last value the gateway published: 0, 1, or -1 before any is known */
    int expected;      /* the value a write in flight waits for, or -1 when none is in flight */
    bool live;         /* a state arrived since subscribing (not one the broker had retained) */
    int set, slot;     /* paired: the block of the write in flight (set -1: warming up, not timed) */
    struct timespec sent;
};

/* The gateways written to: options.base, or in paired mode the bases of -B. Each has its own copy of
 * the home (accessories[gateway * options.accessories + index]) and its own writes in flight. */
#define MAX_GATEWAYS 4
static const char *bases[MAX_GATEWAYS];
static int gateways = 1;
static int in_flight_of[MAX_GATEWAYS], cursor_of[MAX_GATEWAYS];

static struct {
    const char *host, *base, *home, *account, *mode, *action_on, *action_off, *sync_counts, *latency_file;
    char *paired_bases;
    int port, accessories, room_size, qos, count, window, fifty, warm_sets;
    double rate, timeout, block_seconds, gap_seconds;
} options = {
    .host = "127.0.0.1", .base = "homegate", .home = "Bench", .account = "owner", .mode = "rate",
    .action_on = "Fifty On", .action_off = "Fifty Off",
    .port = 1883, .accessories = 1000, .room_size = 20, .qos = 1, .count = 10000, .window = 100, .fifty = 50,
    .rate = 1000, .timeout = 5, .block_seconds = 2, .warm_sets = 2,
};

static struct accessory *accessories;
static double *latencies;          /* milliseconds, one per answered write */
static int *latency_set, *latency_slot, *latency_gateway; /* paired: the block of each answered write */
static int answered, in_flight, unexpected, live_seen;
static int layout_answered = -1, layout_failed; /* layout: the id of the last answer, failed answers */
static struct timespec last_answer;

static void topic_of(char *buffer, size_t size, int gateway, int index, const char *suffix)
{
    snprintf(buffer, size, "%s/%s/Room %d/Switch %d/Switch/On%s", bases[gateway], options.home,
             index / options.room_size + 1, index + 1, suffix);
}

/* The gateway whose base topic starts `topic`, or -1. */
static int gateway_of(const char *topic)
{
    const char *slash = strchr(topic, '/');
    if (!slash) return -1;
    size_t length = (size_t)(slash - topic);
    for (int gateway = 0; gateway < gateways; gateway++) {
        if (strlen(bases[gateway]) == length && memcmp(bases[gateway], topic, length) == 0) return gateway;
    }
    return -1;
}

/* The accessory index of a value topic ".../Switch <k>/Switch/On", or -1. */
static int index_of(const char *topic)
{
    const char *level = strstr(topic, "/Switch ");
    if (!level) return -1;
    int number = atoi(level + 8);
    return number >= 1 && number <= options.accessories ? number - 1 : -1;
}

static void on_connect(struct mosquitto *mosq, void *context, int rc)
{
    (void)context;
    if (rc != 0) {
        fprintf(stderr, "loadgen: connection refused: %s\n", mosquitto_connack_string(rc));
        return;
    }
    char filter[512];
    if (strcmp(options.mode, "layout") == 0) {
        snprintf(filter, sizeof filter, "%s/$response/%s", options.base, options.account);
        mosquitto_subscribe(mosq, NULL, filter, 1);
        return;
    }
    for (int gateway = 0; gateway < gateways; gateway++) {
        snprintf(filter, sizeof filter, "%s/%s/+/+/Switch/On", bases[gateway], options.home);
        mosquitto_subscribe(mosq, NULL, filter, options.qos);
    }
}

/* layout: an answer {"id":…,"ok":true|false,…} on the account's response topic. */
static void layout_message(const struct mosquitto_message *message)
{
    struct answer answer = answer_in(message);
    if (!answer.has_id) return;
    if (!answer.ok) {
        if (layout_failed++ < 5) fprintf(stderr, "loadgen: request failed: %s\n", answer.text);
    }
    layout_answered = answer.id;
    pthread_cond_broadcast(&changed);
}

static void on_message(struct mosquitto *mosq, void *context, const struct mosquitto_message *message)
{
    (void)mosq, (void)context;
    if (strcmp(options.mode, "layout") == 0) {
        pthread_mutex_lock(&lock);
        layout_message(message);
        pthread_mutex_unlock(&lock);
        return;
    }
    int index = index_of(message->topic), gateway = gateway_of(message->topic);
    if (index < 0 || gateway < 0 || message->payloadlen == 0) return;
    int value = message->payloadlen == 4 && memcmp(message->payload, "true", 4) == 0;
    struct timespec arrival = now();
    pthread_mutex_lock(&lock);
    struct accessory *accessory = &accessories[gateway * options.accessories + index];
    if (message->retain) {
        /* Retained messages come right after subscribing: the values the broker holds. */
        if (accessory->value < 0) retained_seen++;
        accessory->value = value;
        last_retained = arrival;
    } else {
        if (!accessory->live) live_seen++;
        accessory->live = true;
        accessory->value = value;
        if (accessory->expected == value) {
            if (accessory->set >= 0) {
                if (latency_set) {
                    latency_set[answered] = accessory->set;
                    latency_slot[answered] = accessory->slot;
                    latency_gateway[answered] = gateway;
                }
                latencies[answered++] = seconds_between(accessory->sent, arrival) * 1000;
            }
            accessory->expected = -1;
            in_flight--;
            in_flight_of[gateway]--;
            last_answer = arrival;
        } else {
            unexpected++;
        }
    }
    pthread_cond_broadcast(&changed);
    pthread_mutex_unlock(&lock);
}

/* Sends one write to `gateway` that flips its next accessory without a write in flight, counted in
 * block (set, slot). Called with `lock` held and fewer than options.accessories in flight there. */
static void send_write_to(struct mosquitto *mosq, int gateway, int set, int slot)
{
    struct accessory *home = &accessories[gateway * options.accessories];
    int *cursor = &cursor_of[gateway];
    while (home[*cursor].expected >= 0) *cursor = (*cursor + 1) % options.accessories;
    struct accessory *accessory = &home[*cursor];
    int target = accessory->value == 1 ? 0 : 1;
    char topic[512];
    char suffix[128];
    snprintf(suffix, sizeof suffix, "/set/%s", options.account);
    topic_of(topic, sizeof topic, gateway, *cursor, suffix);
    accessory->expected = target;
    accessory->set = set;
    accessory->slot = slot;
    accessory->sent = now();
    in_flight++;
    in_flight_of[gateway]++;
    const char *payload = target ? "true" : "false";
    mosquitto_publish(mosq, NULL, topic, (int)strlen(payload), payload, options.qos, false);
    *cursor = (*cursor + 1) % options.accessories;
}

/* Sends one write that flips the next accessory without a write in flight. Called with `lock` held. */
static void send_write(struct mosquitto *mosq) { send_write_to(mosq, 0, 0, 0); }

static void print_latencies(const char *mode, int sent, double elapsed)
{
    if (options.latency_file) {
        FILE *file = fopen(options.latency_file, "w");
        if (!file) {
            perror(options.latency_file);
            exit(1);
        }
        for (int i = 0; i < answered; i++) fprintf(file, "%.4f\n", latencies[i]);
        fclose(file);
    }
    qsort(latencies, answered, sizeof *latencies, compare_doubles);
    printf("{\"mode\":\"%s\",\"qos\":%d,\"sent\":%d,\"answered\":%d,\"lost\":%d,\"unexpected\":%d,"
           "\"elapsed_s\":%.3f,\"throughput\":%.1f,\"p50_ms\":%.3f,\"p90_ms\":%.3f,\"p99_ms\":%.3f,"
           "\"max_ms\":%.3f}\n",
           mode, options.qos, sent, answered, in_flight, unexpected, elapsed,
           elapsed > 0 ? answered / elapsed : 0, percentile(latencies, answered, 0.5),
           percentile(latencies, answered, 0.9), percentile(latencies, answered, 0.99),
           answered ? latencies[answered - 1] : 0);
}

/* After the last write: waits until every write is answered or `timeout` passed without an answer. */
static void drain(void)
{
    while (in_flight > 0) {
        if (!wait_changed(options.timeout) && in_flight > 0) {
            struct timespec t = now();
            if (seconds_between(last_answer, t) >= options.timeout) break;
        }
    }
}

static void run_rate(struct mosquitto *mosq)
{
    struct timespec start = now();
    for (int i = 0; i < options.count; i++) {
        pace(start, i / options.rate);
        while (in_flight >= options.accessories) wait_changed(0.1);
        send_write(mosq);
    }
    double sending = seconds_between(start, now());
    last_answer = now();
    drain();
    print_latencies("rate", options.count, sending);
}

static void run_window(struct mosquitto *mosq)
{
    struct timespec start = now();
    last_answer = start;
    for (int i = 0; i < options.count; i++) {
        while (in_flight >= options.window) {
            if (!wait_changed(options.timeout) && seconds_between(last_answer, now()) >= options.timeout) {
                goto done;
            }
        }
        send_write(mosq);
    }
    drain();
done:;
    double elapsed = seconds_between(start, last_answer);
    print_latencies("window", options.count, elapsed);
}

/* The k-th permutation (lexicographic, k < n!) of 0..n-1 into `order`. */
static void permutation(int n, int k, int *order)
{
    int left[MAX_GATEWAYS];
    for (int i = 0; i < n; i++) left[i] = i;
    for (int i = 0; i < n; i++) {
        int rest = 1; /* (n - 1 - i)!: the orders of what is left after this place */
        for (int j = 2; j < n - i; j++) rest *= j;
        int pick = k / rest;
        k %= rest;
        order[i] = left[pick];
        for (int j = pick; j < n - 1 - i; j++) left[j] = left[j + 1];
    }
}

static void run_paired(struct mosquitto *mosq)
{
    int per_block = (int)(options.rate * options.block_seconds + 0.5), sets = options.warm_sets + options.count;
    int orders = 1;
    for (int i = 2; i <= gateways; i++) orders *= i;
    long total = (long)sets * gateways * per_block, sent = 0;
    double pauses = 0; /* the gaps so far: each block after the first starts gap_seconds later */
    struct timespec start = now();
    for (int set = 0; set < sets; set++) {
        int order[MAX_GATEWAYS];
        permutation(gateways, set % orders, order);
        for (int slot = 0; slot < gateways; slot++) {
            int gateway = order[slot], timed = set - options.warm_sets;
            if (set > 0 || slot > 0) pauses += options.gap_seconds;
            for (int i = 0; i < per_block; i++, sent++) {
                pace(start, sent / options.rate + pauses);
                while (in_flight_of[gateway] >= options.accessories) wait_changed(0.1);
                send_write_to(mosq, gateway, timed, slot);
            }
        }
    }
    double sending = seconds_between(start, now());
    last_answer = now();
    drain();
    if (options.latency_file) {
        FILE *file = fopen(options.latency_file, "w");
        if (!file) {
            perror(options.latency_file);
            exit(1);
        }
        for (int i = 0; i < answered; i++) {
            fprintf(file, "%d %d %d %.4f\n", latency_set[i], latency_slot[i], latency_gateway[i], latencies[i]);
        }
        fclose(file);
    }
    printf("{\"mode\":\"paired\",\"qos\":%d,\"sets\":%d,\"warm_sets\":%d,\"block_s\":%.3f,\"sent\":%ld,"
           "\"elapsed_s\":%.3f,\"rate\":%.1f,\"lost\":%d,\"unexpected\":%d",
           options.qos, options.count, options.warm_sets, options.block_seconds, total, sending,
           sending - pauses > 0 ? total / (sending - pauses) : 0, in_flight, unexpected);
    /* Each gateway's timed writes, sorted for its percentiles (the file above kept the order). */
    double *mine = malloc((answered > 0 ? answered : 1) * sizeof *mine);
    for (int gateway = 0; gateway < gateways; gateway++) {
        int count = 0;
        for (int i = 0; i < answered; i++) {
            if (latency_gateway[i] == gateway) mine[count++] = latencies[i];
        }
        qsort(mine, count, sizeof *mine, compare_doubles);
        printf(",\"%s_answered\":%d,\"%s_lost\":%d,\"%s_p50_ms\":%.3f,\"%s_p99_ms\":%.3f", bases[gateway], count,
               bases[gateway], in_flight_of[gateway], bases[gateway], percentile(mine, count, 0.5), bases[gateway],
               percentile(mine, count, 0.99));
    }
    printf("}\n");
    free(mine);
}

static void run_startup(void)
{
    printf("ready\n");
    fflush(stdout);
    while (live_seen < options.accessories) {
        if (!wait_changed(options.timeout * 12)) break;
    }
    struct timespec wall;
    clock_gettime(CLOCK_REALTIME, &wall);
    printf("{\"mode\":\"startup\",\"topics\":%d,\"done_ns\":%lld}\n", live_seen,
           (long long)wall.tv_sec * 1000000000LL + wall.tv_nsec);
}

static void run_actionset(struct mosquitto *mosq)
{
    int fifty = options.fifty < options.accessories ? options.fifty : options.accessories;
    double *times = calloc(options.count, sizeof *times);
    int measured = 0, lost = 0;
    char topic[512];
    /* Run 0 switches them all on unmeasured, so every measured run changes all of them. */
    for (int run = 0; run <= options.count; run++) {
        int target = run % 2 == 0;
        for (int i = 0; i < fifty; i++) {
            if (accessories[i].value != target) {
                accessories[i].expected = target;
                in_flight++;
            }
        }
        snprintf(topic, sizeof topic, "%s/%s/$actionsets/%s/$run/%s", options.base, options.home,
                 target ? options.action_on : options.action_off, options.account);
        struct timespec start = now();
        for (int i = 0; i < fifty; i++) accessories[i].sent = start;
        answered = 0;
        last_answer = start;
        mosquitto_publish(mosq, NULL, topic, 0, NULL, options.qos, false);
        drain();
        if (run > 0) {
            lost += in_flight;
            times[measured++] = seconds_between(start, last_answer) * 1000;
        }
        for (int i = 0; i < fifty; i++) accessories[i].expected = -1;
        in_flight = 0;
    }
    qsort(times, measured, sizeof *times, compare_doubles);
    printf("{\"mode\":\"actionset\",\"writes\":%d,\"runs\":%d,\"lost\":%d,\"p50_ms\":%.3f,\"max_ms\":%.3f}\n",
           fifty, measured, lost, measured ? times[measured / 2] : 0, measured ? times[measured - 1] : 0);
    free(times);
}

/* The syncs the slow-disk library counted so far (fsync + fdatasync + syncfs), or -1 without the file. */
static long long syncs_so_far(void)
{
    if (!options.sync_counts) return -1;
    unsigned long long counts[3] = { 0, 0, 0 };
    FILE *file = fopen(options.sync_counts, "rb");
    if (!file) return -1;
    size_t got = fread(counts, sizeof counts[0], 3, file);
    fclose(file);
    return got == 3 ? (long long)(counts[0] + counts[1] + counts[2]) : -1;
}

static void run_layout(struct mosquitto *mosq)
{
    int synced = 0; /* requests with a sync between sending and the answer */
    char topic[512], body[512];
    snprintf(topic, sizeof topic, "%s/$request/%s/addRoom", options.base, options.account);
    int lost = 0;
    struct timespec start = now();
    for (int i = 1; i <= options.count; i++) {
        snprintf(body, sizeof body, "{\"id\":%d,\"name\":\"Layout %d %d\",\"home\":\"%s\"}", i, (int)getpid(), i,
                 options.home);
        long long syncs_before = syncs_so_far();
        struct timespec sent = now();
        mosquitto_publish(mosq, NULL, topic, (int)strlen(body), body, 1, false);
        while (layout_answered != i) {
            if (!wait_changed(options.timeout) && layout_answered != i) break;
        }
        if (layout_answered != i) {
            lost++;
            continue;
        }
        latencies[answered++] = seconds_between(sent, now()) * 1000;
        if (syncs_before >= 0 && syncs_so_far() > syncs_before) synced++;
    }
    double elapsed = seconds_between(start, now());
    qsort(latencies, answered, sizeof *latencies, compare_doubles);
    printf("{\"mode\":\"layout\",\"operation\":\"addRoom\",\"sent\":%d,\"answered\":%d,\"failed\":%d,"
           "\"synced_before_answer\":%d,\"lost\":%d,\"elapsed_s\":%.3f,\"throughput\":%.1f,\"p50_ms\":%.3f,\"p90_ms\":%.3f,"
           "\"p99_ms\":%.3f,\"min_ms\":%.3f,\"max_ms\":%.3f}\n",
           options.count, answered, layout_failed, options.sync_counts ? synced : -1, lost, elapsed, elapsed > 0 ? answered / elapsed : 0,
           percentile(latencies, answered, 0.5), percentile(latencies, answered, 0.9),
           percentile(latencies, answered, 0.99), answered ? latencies[0] : 0,
           answered ? latencies[answered - 1] : 0);
}

static void usage(void)
{
    fprintf(stderr,
            "usage: loadgen [-h host] [-p port] [-b base] [-H home] [-u account] [-n accessories]\n"
            "               [-r room size] [-q qos] [-m rate|window|startup|actionset|layout] [-R rate]\n"
            "               [-c count] [-w window] [-t timeout s] [-a action on] [-A action off] [-F writes]\n"
            "               [-S slowfsync counts file] [-o latency file]\n"
            "               [-B base,base[,...] (paired)] [-s block seconds] [-G gap seconds] [-W warm-up sets]\n");
    exit(2);
}

int main(int argc, char **argv)
{
    int option;
    while ((option = getopt(argc, argv, "h:p:b:H:u:n:r:q:m:R:c:w:t:a:A:F:S:o:B:s:G:W:")) != -1) {
        switch (option) {
        case 'h': options.host = optarg; break;
        case 'p': options.port = atoi(optarg); break;
        case 'b': options.base = optarg; break;
        case 'H': options.home = optarg; break;
        case 'u': options.account = optarg; break;
        case 'n': options.accessories = atoi(optarg); break;
        case 'r': options.room_size = atoi(optarg); break;
        case 'q': options.qos = atoi(optarg); break;
        case 'm': options.mode = optarg; break;
        case 'R': options.rate = atof(optarg); break;
        case 'c': options.count = atoi(optarg); break;
        case 'w': options.window = atoi(optarg); break;
        case 't': options.timeout = atof(optarg); break;
        case 'a': options.action_on = optarg; break;
        case 'A': options.action_off = optarg; break;
        case 'F': options.fifty = atoi(optarg); break;
        case 'S': options.sync_counts = optarg; break;
        case 'o': options.latency_file = optarg; break;
        case 'B': options.paired_bases = optarg; break;
        case 's': options.block_seconds = atof(optarg); break;
        case 'G': options.gap_seconds = atof(optarg); break;
        case 'W': options.warm_sets = atoi(optarg); break;
        default: usage();
        }
    }
    if (options.accessories < 1 || options.room_size < 1 || options.count < 1 || options.window < 1) usage();
    bool paired = strcmp(options.mode, "paired") == 0;
    bases[0] = options.base;
    long capacity = options.count > options.fifty ? options.count : options.fifty;
    if (paired) {
        gateways = 0;
        if (!options.paired_bases) usage();
        for (char *base = strtok(options.paired_bases, ","); base; base = strtok(NULL, ",")) {
            if (gateways == MAX_GATEWAYS) usage();
            bases[gateways++] = base;
        }
        if (gateways < 2 || options.block_seconds <= 0 || options.gap_seconds < 0 || options.warm_sets < 0) usage();
        capacity = (long)options.count * gateways * (long)(options.rate * options.block_seconds + 0.5);
        latency_set = malloc(capacity * sizeof *latency_set);
        latency_slot = malloc(capacity * sizeof *latency_slot);
        latency_gateway = malloc(capacity * sizeof *latency_gateway);
    }

    accessories = malloc((size_t)gateways * options.accessories * sizeof *accessories);
    latencies = malloc(capacity * sizeof *latencies);
    for (int i = 0; i < gateways * options.accessories; i++) {
        accessories[i] = (struct accessory){ .value = -1, .expected = -1 };
    }

    struct load_callbacks callbacks = { .on_connect = on_connect, .on_message = on_message };
    struct mosquitto *mosq = load_start("loadgen", options.host, options.port, callbacks);
    if (!mosq) return 1;
    if (strcmp(options.mode, "startup") == 0) {
        run_startup();
    } else if (strcmp(options.mode, "layout") == 0) {
        run_layout(mosq);
    } else {
        await_retained(gateways * options.accessories);
        if (paired) run_paired(mosq);
        else if (strcmp(options.mode, "rate") == 0) run_rate(mosq);
        else if (strcmp(options.mode, "window") == 0) run_window(mosq);
        else if (strcmp(options.mode, "actionset") == 0) run_actionset(mosq);
        else usage();
    }
    load_stop(mosq);
    return 0;
}
