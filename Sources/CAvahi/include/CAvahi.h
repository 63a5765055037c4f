#ifndef HOMEGATE_CAVAHI_H
#define HOMEGATE_CAVAHI_H

/*
 * Avahi's client library for HomeKit discovery and the bridges' advertisements: its types and constants from its headers, and its
 * functions through a table filled by dlopen on first use. A gateway without HAP discovery never
 * maps libavahi-client nor what it links (D-Bus, libsystemd, libgcrypt, compression: about 1 MB).
 */
#include <avahi-client/client.h>
#include <avahi-client/lookup.h>
#include <avahi-client/publish.h>
#include <avahi-common/alternative.h>
#include <avahi-common/address.h>
#include <avahi-common/error.h>
#include <avahi-common/malloc.h>
#include <avahi-common/strlst.h>
#include <avahi-common/thread-watch.h>

/* The Avahi functions the project calls, each under its own name. */
struct homegate_avahi {
    __typeof__(&avahi_address_snprint) _Nonnull avahi_address_snprint;
    __typeof__(&avahi_alternative_service_name) _Nonnull avahi_alternative_service_name;
    __typeof__(&avahi_client_errno) _Nonnull avahi_client_errno;
    __typeof__(&avahi_client_free) _Nonnull avahi_client_free;
    __typeof__(&avahi_client_new) _Nonnull avahi_client_new;
    __typeof__(&avahi_entry_group_add_service_strlst) _Nonnull avahi_entry_group_add_service_strlst;
    __typeof__(&avahi_entry_group_commit) _Nonnull avahi_entry_group_commit;
    __typeof__(&avahi_entry_group_free) _Nonnull avahi_entry_group_free;
    __typeof__(&avahi_entry_group_new) _Nonnull avahi_entry_group_new;
    __typeof__(&avahi_entry_group_reset) _Nonnull avahi_entry_group_reset;
    __typeof__(&avahi_entry_group_update_service_txt_strlst) _Nonnull avahi_entry_group_update_service_txt_strlst;
    __typeof__(&avahi_free) _Nonnull avahi_free;
    __typeof__(&avahi_service_browser_get_client) _Nonnull avahi_service_browser_get_client;
    __typeof__(&avahi_service_browser_new) _Nonnull avahi_service_browser_new;
    __typeof__(&avahi_service_resolver_new) _Nonnull avahi_service_resolver_new;
    __typeof__(&avahi_strerror) _Nonnull avahi_strerror;
    __typeof__(&avahi_string_list_add_pair) _Nonnull avahi_string_list_add_pair;
    __typeof__(&avahi_string_list_free) _Nonnull avahi_string_list_free;
    __typeof__(&avahi_string_list_get_next) _Nonnull avahi_string_list_get_next;
    __typeof__(&avahi_string_list_get_pair) _Nonnull avahi_string_list_get_pair;
    __typeof__(&avahi_threaded_poll_free) _Nonnull avahi_threaded_poll_free;
    __typeof__(&avahi_threaded_poll_get) _Nonnull avahi_threaded_poll_get;
    __typeof__(&avahi_threaded_poll_lock) _Nonnull avahi_threaded_poll_lock;
    __typeof__(&avahi_threaded_poll_new) _Nonnull avahi_threaded_poll_new;
    __typeof__(&avahi_threaded_poll_start) _Nonnull avahi_threaded_poll_start;
    __typeof__(&avahi_threaded_poll_stop) _Nonnull avahi_threaded_poll_stop;
    __typeof__(&avahi_threaded_poll_unlock) _Nonnull avahi_threaded_poll_unlock;
};

/*
 * libavahi-client.so.3 (and libavahi-common.so.3 through it), loaded once (thread-safe): the
 * table, or NULL with `*error` set to why it could not be loaded (dlerror's text).
 */
const struct homegate_avahi *_Nullable homegate_load_avahi(const char *_Nullable *_Nonnull error);

#endif
