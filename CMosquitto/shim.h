#ifndef HOMEGATE_CMOSQUITTO_SHIM_H
#define HOMEGATE_CMOSQUITTO_SHIM_H

/* libmosquitto (Debian's libmosquitto-dev), the one MQTT engine: its client API and its protocol
 * constants (reason codes, property identifiers). */
#include <mosquitto.h>
#include <mqtt_protocol.h>

#include <dlfcn.h>
#include <stddef.h>
#include <sys/socket.h>
#include <unistd.h>

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

/* Whether the running libmosquitto (asked at run time, not the headers built against) is a release
 * whose struct mosquitto is known to begin with sock, sockpairR and sockpairW: 2.0.x (Debian 12's
 * 2.0.11, tested) and 2.1 (read in mosquitto_internal.h of its develop branch). */
static inline int homegate_mosquitto_layout_known(void)
{
    int major = 0, minor = 0, revision = 0;
    mosquitto_lib_version(&major, &minor, &revision);
    return major == 2 && (minor == 0 || minor == 1);
}

/* libmosquitto wakes its own loop (the select of mosquitto_loop) with a byte written to a socket pair
 * for every packet it queues. Served by an outside loop, nothing reads that pair: once it is full,
 * every packet queued costs a write() that fails with EAGAIN (four per command) and leaves errno at
 * EAGAIN, which mosquitto_loop_read takes for an empty socket, so that it stops after the packet.
 * This closes the pair, for a client whose every call of mosquitto_loop ends by itself (a timeout).
 *
 * Only a release whose layout is known (homegate_mosquitto_layout_known) is touched: there the first
 * fields of struct mosquitto are sock, sockpairR and sockpairW (mosquitto_internal.h). Their numbers
 * are taken for the pair only when the first is the client's socket and both others are AF_UNIX
 * stream sockets (no I/O for that); then one byte sent at the reading end must arrive at the
 * writing end, or nothing is changed. Only before the first connect, while no other thread uses
 * `mosq`. Returns 1 when the pair is closed, 0 when it was left as it was. */
static inline int homegate_mosquitto_close_wakeup_pair(struct mosquitto *mosq)
{
    if (!homegate_mosquitto_layout_known()) return 0;
    int *fields = (int *)mosq;
    if (fields[0] != mosquitto_socket(mosq)) return 0;
    int reader = fields[1], writer = fields[2];
    if (reader < 0 || writer < 0 || reader == writer) return 0;
    const int ends[2] = {reader, writer};
    for (int i = 0; i < 2; i++) {
        int domain = 0, type = 0;
        socklen_t domainLength = sizeof domain, typeLength = sizeof type;
        if (getsockopt(ends[i], SOL_SOCKET, SO_DOMAIN, &domain, &domainLength) != 0 || domain != AF_UNIX) return 0;
        if (getsockopt(ends[i], SOL_SOCKET, SO_TYPE, &type, &typeLength) != 0 || type != SOCK_STREAM) return 0;
    }
    const unsigned char probe = 0x5a;
    unsigned char received = 0;
    if (send(reader, &probe, 1, MSG_DONTWAIT | MSG_NOSIGNAL) != 1) return 0;
    if (recv(writer, &received, 1, MSG_DONTWAIT) != 1 || received != probe) return 0;
    fields[1] = -1;
    fields[2] = -1;
    close(reader);
    close(writer);
    return 1;
}

#endif
