#ifndef HOMEGATE_CMOSQUITTO_SHIM_H
#define HOMEGATE_CMOSQUITTO_SHIM_H

/* libmosquitto (Debian's libmosquitto-dev), the one MQTT engine: its client API and its protocol
 * constants (reason codes, property identifiers). */
#include <mosquitto.h>
#include <mqtt_protocol.h>

#include <dlfcn.h>
#include <stddef.h>

/* The bytes OpenSSL has decrypted for `mosq` and nobody has read yet (0 without TLS). A loop that
 * polls the socket does not see them: mosquitto_loop_read can return with a whole packet still in
 * OpenSSL's buffer and nothing left on the socket. SSL_pending is OpenSSL's, which libmosquitto has
 * loaded; it is looked up there rather than linked, so building needs no OpenSSL headers. */
static inline int homegate_mosquitto_tls_pending(struct mosquitto *mosq)
{
    void *ssl = mosquitto_ssl_get(mosq);
    if (ssl == NULL) return 0;
    static int (*pending)(const void *) = NULL;
    if (pending == NULL) pending = (int (*)(const void *))dlsym(RTLD_DEFAULT, "SSL_pending");
    return pending == NULL ? 0 : pending(ssl);
}

#endif
