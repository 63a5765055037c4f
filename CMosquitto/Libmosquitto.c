#include "CMosquitto.h"

#include "CDynamicLoading.h"

static struct homegate_libmosquitto library;

/* In the order of the table's fields. */
static const char *const names[] = {
    "mosquitto_connack_string",
    "mosquitto_connect_bind_v5",
    "mosquitto_connect_v5_callback_set",
    "mosquitto_destroy",
    "mosquitto_disconnect",
    "mosquitto_disconnect_v5_callback_set",
    "mosquitto_int_option",
    "mosquitto_lib_init",
    "mosquitto_log_callback_set",
    "mosquitto_loop",
    "mosquitto_max_inflight_messages_set",
    "mosquitto_message_v5_callback_set",
    "mosquitto_new",
    "mosquitto_property_add_binary",
    "mosquitto_property_add_int32",
    "mosquitto_property_add_string",
    "mosquitto_property_add_string_pair",
    "mosquitto_property_free_all",
    "mosquitto_property_read_binary",
    "mosquitto_property_read_int32",
    "mosquitto_property_read_string",
    "mosquitto_property_read_string_pair",
    "mosquitto_publish_v5",
    "mosquitto_publish_v5_callback_set",
    "mosquitto_reason_string",
    "mosquitto_reconnect",
    "mosquitto_strerror",
    "mosquitto_subscribe_multiple",
    "mosquitto_subscribe_v5_callback_set",
    "mosquitto_threaded_set",
    "mosquitto_tls_insecure_set",
    "mosquitto_tls_opts_set",
    "mosquitto_tls_set",
    "mosquitto_unsubscribe_multiple",
    "mosquitto_unsubscribe_v5_callback_set",
    "mosquitto_user_data_set",
    "mosquitto_username_pw_set",
    "mosquitto_will_set_v5",
};

_Static_assert(sizeof library == sizeof names / sizeof *names * sizeof(void *), "a name for every field");

static struct homegate_lazy_library lazy = HOMEGATE_LAZY_LIBRARY("libmosquitto.so.1", names, &library);

static pthread_once_t initialised = PTHREAD_ONCE_INIT;

static void initialise(void) { library.mosquitto_lib_init(); }

const struct homegate_libmosquitto *homegate_load_libmosquitto(const char **error)
{
    if (!homegate_lazy_load(&lazy, error)) return NULL;
    pthread_once(&initialised, initialise);
    return &library;
}
