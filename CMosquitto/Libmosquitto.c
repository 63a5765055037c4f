#include "CMosquitto.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>

static struct homegate_libmosquitto library;
static const struct homegate_libmosquitto *loaded;
static char failure[512];
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void *resolve(void *handle, const char *name)
{
    void *function = dlsym(handle, name);
    if (function == NULL && failure[0] == 0) snprintf(failure, sizeof failure, "%s", dlerror());
    return function;
}

static void load(void)
{
    void *handle = dlopen("libmosquitto.so.1", RTLD_NOW | RTLD_LOCAL);
    if (handle == NULL) {
        snprintf(failure, sizeof failure, "%s", dlerror());
        return;
    }
    library.mosquitto_connack_string = (__typeof__(library.mosquitto_connack_string))resolve(handle, "mosquitto_connack_string");
    library.mosquitto_connect_bind_v5 = (__typeof__(library.mosquitto_connect_bind_v5))resolve(handle, "mosquitto_connect_bind_v5");
    library.mosquitto_connect_v5_callback_set = (__typeof__(library.mosquitto_connect_v5_callback_set))resolve(handle, "mosquitto_connect_v5_callback_set");
    library.mosquitto_destroy = (__typeof__(library.mosquitto_destroy))resolve(handle, "mosquitto_destroy");
    library.mosquitto_disconnect = (__typeof__(library.mosquitto_disconnect))resolve(handle, "mosquitto_disconnect");
    library.mosquitto_disconnect_v5_callback_set = (__typeof__(library.mosquitto_disconnect_v5_callback_set))resolve(handle, "mosquitto_disconnect_v5_callback_set");
    library.mosquitto_int_option = (__typeof__(library.mosquitto_int_option))resolve(handle, "mosquitto_int_option");
    library.mosquitto_lib_init = (__typeof__(library.mosquitto_lib_init))resolve(handle, "mosquitto_lib_init");
    library.mosquitto_log_callback_set = (__typeof__(library.mosquitto_log_callback_set))resolve(handle, "mosquitto_log_callback_set");
    library.mosquitto_loop = (__typeof__(library.mosquitto_loop))resolve(handle, "mosquitto_loop");
    library.mosquitto_max_inflight_messages_set = (__typeof__(library.mosquitto_max_inflight_messages_set))resolve(handle, "mosquitto_max_inflight_messages_set");
    library.mosquitto_message_v5_callback_set = (__typeof__(library.mosquitto_message_v5_callback_set))resolve(handle, "mosquitto_message_v5_callback_set");
    library.mosquitto_new = (__typeof__(library.mosquitto_new))resolve(handle, "mosquitto_new");
    library.mosquitto_property_add_binary = (__typeof__(library.mosquitto_property_add_binary))resolve(handle, "mosquitto_property_add_binary");
    library.mosquitto_property_add_int32 = (__typeof__(library.mosquitto_property_add_int32))resolve(handle, "mosquitto_property_add_int32");
    library.mosquitto_property_add_string = (__typeof__(library.mosquitto_property_add_string))resolve(handle, "mosquitto_property_add_string");
    library.mosquitto_property_add_string_pair = (__typeof__(library.mosquitto_property_add_string_pair))resolve(handle, "mosquitto_property_add_string_pair");
    library.mosquitto_property_free_all = (__typeof__(library.mosquitto_property_free_all))resolve(handle, "mosquitto_property_free_all");
    library.mosquitto_property_read_binary = (__typeof__(library.mosquitto_property_read_binary))resolve(handle, "mosquitto_property_read_binary");
    library.mosquitto_property_read_int32 = (__typeof__(library.mosquitto_property_read_int32))resolve(handle, "mosquitto_property_read_int32");
    library.mosquitto_property_read_string = (__typeof__(library.mosquitto_property_read_string))resolve(handle, "mosquitto_property_read_string");
    library.mosquitto_property_read_string_pair = (__typeof__(library.mosquitto_property_read_string_pair))resolve(handle, "mosquitto_property_read_string_pair");
    library.mosquitto_publish_v5 = (__typeof__(library.mosquitto_publish_v5))resolve(handle, "mosquitto_publish_v5");
    library.mosquitto_publish_v5_callback_set = (__typeof__(library.mosquitto_publish_v5_callback_set))resolve(handle, "mosquitto_publish_v5_callback_set");
    library.mosquitto_reason_string = (__typeof__(library.mosquitto_reason_string))resolve(handle, "mosquitto_reason_string");
    library.mosquitto_reconnect = (__typeof__(library.mosquitto_reconnect))resolve(handle, "mosquitto_reconnect");
    library.mosquitto_strerror = (__typeof__(library.mosquitto_strerror))resolve(handle, "mosquitto_strerror");
    library.mosquitto_subscribe_multiple = (__typeof__(library.mosquitto_subscribe_multiple))resolve(handle, "mosquitto_subscribe_multiple");
    library.mosquitto_subscribe_v5_callback_set = (__typeof__(library.mosquitto_subscribe_v5_callback_set))resolve(handle, "mosquitto_subscribe_v5_callback_set");
    library.mosquitto_threaded_set = (__typeof__(library.mosquitto_threaded_set))resolve(handle, "mosquitto_threaded_set");
    library.mosquitto_tls_insecure_set = (__typeof__(library.mosquitto_tls_insecure_set))resolve(handle, "mosquitto_tls_insecure_set");
    library.mosquitto_tls_opts_set = (__typeof__(library.mosquitto_tls_opts_set))resolve(handle, "mosquitto_tls_opts_set");
    library.mosquitto_tls_set = (__typeof__(library.mosquitto_tls_set))resolve(handle, "mosquitto_tls_set");
    library.mosquitto_unsubscribe_multiple = (__typeof__(library.mosquitto_unsubscribe_multiple))resolve(handle, "mosquitto_unsubscribe_multiple");
    library.mosquitto_unsubscribe_v5_callback_set = (__typeof__(library.mosquitto_unsubscribe_v5_callback_set))resolve(handle, "mosquitto_unsubscribe_v5_callback_set");
    library.mosquitto_user_data_set = (__typeof__(library.mosquitto_user_data_set))resolve(handle, "mosquitto_user_data_set");
    library.mosquitto_username_pw_set = (__typeof__(library.mosquitto_username_pw_set))resolve(handle, "mosquitto_username_pw_set");
    library.mosquitto_will_set_v5 = (__typeof__(library.mosquitto_will_set_v5))resolve(handle, "mosquitto_will_set_v5");
    if (failure[0] != 0) return;
    library.mosquitto_lib_init();
    loaded = &library;
}

const struct homegate_libmosquitto *homegate_load_libmosquitto(const char **error)
{
    pthread_once(&once, load);
    *error = loaded == NULL ? failure : NULL;
    return loaded;
}
