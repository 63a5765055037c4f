#ifndef HOMEGATE_CMOSQUITTO_SHIM_H
#define HOMEGATE_CMOSQUITTO_SHIM_H

/* libmosquitto (Debian's libmosquitto-dev), the one MQTT engine: its client API and its protocol
 * constants (reason codes, property identifiers). */
#include <mosquitto.h>
#include <mqtt_protocol.h>

#endif
