#ifndef HOMEGATE_CMOSQUITTO_H
#define HOMEGATE_CMOSQUITTO_H

/*
 * libmosquitto for the MQTT module: its constants and types from its headers, and its functions
 * through a table filled by dlopen on first use. Only TLS connections use libmosquitto; a gateway
 * on plain TCP (TCPEngine) never maps it, nor the OpenSSL it links (about 1.8 MB of RSS).
 */
#include <mosquitto.h>
#include <mqtt_protocol.h>

/* The libmosquitto functions the project calls, each under its own name. */
struct homegate_libmosquitto {
    __typeof__(&mosquitto_connack_string) _Nonnull mosquitto_connack_string;
    __typeof__(&mosquitto_connect_bind_v5) _Nonnull mosquitto_connect_bind_v5;
    __typeof__(&mosquitto_connect_v5_callback_set) _Nonnull mosquitto_connect_v5_callback_set;
    __typeof__(&mosquitto_destroy) _Nonnull mosquitto_destroy;
    __typeof__(&mosquitto_disconnect) _Nonnull mosquitto_disconnect;
    __typeof__(&mosquitto_disconnect_v5_callback_set) _Nonnull mosquitto_disconnect_v5_callback_set;
    __typeof__(&mosquitto_int_option) _Nonnull mosquitto_int_option;
    __typeof__(&mosquitto_lib_init) _Nonnull mosquitto_lib_init;
    __typeof__(&mosquitto_log_callback_set) _Nonnull mosquitto_log_callback_set;
    __typeof__(&mosquitto_loop) _Nonnull mosquitto_loop;
    __typeof__(&mosquitto_max_inflight_messages_set) _Nonnull mosquitto_max_inflight_messages_set;
    __typeof__(&mosquitto_message_v5_callback_set) _Nonnull mosquitto_message_v5_callback_set;
    __typeof__(&mosquitto_new) _Nonnull mosquitto_new;
    __typeof__(&mosquitto_property_add_binary) _Nonnull mosquitto_property_add_binary;
    __typeof__(&mosquitto_property_add_int32) _Nonnull mosquitto_property_add_int32;
    __typeof__(&mosquitto_property_add_string) _Nonnull mosquitto_property_add_string;
    __typeof__(&mosquitto_property_add_string_pair) _Nonnull mosquitto_property_add_string_pair;
    __typeof__(&mosquitto_property_free_all) _Nonnull mosquitto_property_free_all;
    __typeof__(&mosquitto_property_read_binary) _Nonnull mosquitto_property_read_binary;
    __typeof__(&mosquitto_property_read_int32) _Nonnull mosquitto_property_read_int32;
    __typeof__(&mosquitto_property_read_string) _Nonnull mosquitto_property_read_string;
    __typeof__(&mosquitto_property_read_string_pair) _Nonnull mosquitto_property_read_string_pair;
    __typeof__(&mosquitto_publish_v5) _Nonnull mosquitto_publish_v5;
    __typeof__(&mosquitto_publish_v5_callback_set) _Nonnull mosquitto_publish_v5_callback_set;
    __typeof__(&mosquitto_reason_string) _Nonnull mosquitto_reason_string;
    __typeof__(&mosquitto_reconnect) _Nonnull mosquitto_reconnect;
    __typeof__(&mosquitto_strerror) _Nonnull mosquitto_strerror;
    __typeof__(&mosquitto_subscribe_multiple) _Nonnull mosquitto_subscribe_multiple;
    __typeof__(&mosquitto_subscribe_v5_callback_set) _Nonnull mosquitto_subscribe_v5_callback_set;
    __typeof__(&mosquitto_threaded_set) _Nonnull mosquitto_threaded_set;
    __typeof__(&mosquitto_tls_insecure_set) _Nonnull mosquitto_tls_insecure_set;
    __typeof__(&mosquitto_tls_opts_set) _Nonnull mosquitto_tls_opts_set;
    __typeof__(&mosquitto_tls_set) _Nonnull mosquitto_tls_set;
    __typeof__(&mosquitto_unsubscribe_multiple) _Nonnull mosquitto_unsubscribe_multiple;
    __typeof__(&mosquitto_unsubscribe_v5_callback_set) _Nonnull mosquitto_unsubscribe_v5_callback_set;
    __typeof__(&mosquitto_user_data_set) _Nonnull mosquitto_user_data_set;
    __typeof__(&mosquitto_username_pw_set) _Nonnull mosquitto_username_pw_set;
    __typeof__(&mosquitto_will_set_v5) _Nonnull mosquitto_will_set_v5;
};

/*
 * libmosquitto.so.1, loaded once (thread-safe) and initialised with mosquitto_lib_init: the table,
 * or NULL with `*error` set to why it could not be loaded (dlerror's text).
 */
const struct homegate_libmosquitto *_Nullable homegate_load_libmosquitto(const char *_Nullable *_Nonnull error);

#endif
