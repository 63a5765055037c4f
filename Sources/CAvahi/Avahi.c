#include "CAvahi.h"

#include "CDynamicLoading.h"

static struct homegate_avahi library;

/* In the order of the table's fields. */
static const char *const names[] = {
    "avahi_address_snprint",
    "avahi_alternative_service_name",
    "avahi_client_errno",
    "avahi_client_free",
    "avahi_client_new",
    "avahi_entry_group_add_service_strlst",
    "avahi_entry_group_commit",
    "avahi_entry_group_free",
    "avahi_entry_group_new",
    "avahi_entry_group_reset",
    "avahi_entry_group_update_service_txt_strlst",
    "avahi_free",
    "avahi_service_browser_get_client",
    "avahi_service_browser_new",
    "avahi_service_resolver_new",
    "avahi_strerror",
    "avahi_string_list_add_pair",
    "avahi_string_list_free",
    "avahi_string_list_get_next",
    "avahi_string_list_get_pair",
    "avahi_threaded_poll_free",
    "avahi_threaded_poll_get",
    "avahi_threaded_poll_lock",
    "avahi_threaded_poll_new",
    "avahi_threaded_poll_start",
    "avahi_threaded_poll_stop",
    "avahi_threaded_poll_unlock",
};

_Static_assert(sizeof library == sizeof names / sizeof *names * sizeof(void *), "a name for every field");

static struct homegate_lazy_library lazy = HOMEGATE_LAZY_LIBRARY("libavahi-client.so.3", names, &library);

const struct homegate_avahi *homegate_load_avahi(const char **error)
{
    return homegate_lazy_load(&lazy, error) ? &library : NULL;
}
