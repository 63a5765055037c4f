#ifndef HOMEGATE_CMOSQUITTO_SHIM_H
#define HOMEGATE_CMOSQUITTO_SHIM_H

#include <mosquitto.h>
#include <mqtt_protocol.h>

/* malloc_trim, for TCPEngine after a burst of publishes: Glibc's Swift module leaves malloc.h out. */
#ifdef __linux__
#include <malloc.h>
#endif

#endif
