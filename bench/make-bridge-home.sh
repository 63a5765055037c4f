#!/bin/sh
# Writes the home of the benchmark's HomeKit bridge section as a demo-home YAML file
# (Config/demo-home.yml's format) on stdout: ACCESSORIES virtual devices in the home "Bench"
# administered by "owner", in rooms "Room 1", "Room 2", ... of ROOM_SIZE each. The first half are
# switches "Switch 1" ... (what bench/out/loadgen writes, as in bench/make-home.sh); the others
# cycle through the other kinds a home has (light, outlet, thermostat, lock, garage door, blinds,
# fan, temperature, humidity, motion and contact sensors), named "<Kind> N", so that the bridge
# serves the characteristics of a real home, not 100 times the same one.
# scripts/hap-accessory.py --bench-home builds the same accessories for HAP-python (keep the two
# lists alike).
#
# usage: bench/make-bridge-home.sh ACCESSORIES [ROOM_SIZE]
set -eu
accessories=${1:?usage: make-bridge-home.sh ACCESSORIES [ROOM_SIZE]}
room_size=${2:-20}

awk -v n="$accessories" -v size="$room_size" 'BEGIN {
    split("lightbulb outlet thermostat lock garageDoor windowCovering fan temperatureSensor humiditySensor motionSensor contactSensor", kinds, " ")
    names["lightbulb"] = "Light"; names["outlet"] = "Outlet"; names["thermostat"] = "Thermostat"
    names["lock"] = "Lock"; names["garageDoor"] = "Garage Door"; names["windowCovering"] = "Blinds"
    names["fan"] = "Fan"; names["temperatureSensor"] = "Temperature"; names["humiditySensor"] = "Humidity"
    names["motionSensor"] = "Motion"; names["contactSensor"] = "Contact"
    switches = int(n / 2)
    rooms = int((n + size - 1) / size)
    print "devices:"
    for (i = 1; i <= n; i++) {
        if (i <= switches) printf "  - { id: switch-%d, name: Switch %d, kind: switch }\n", i, i
        else {
            kind = kinds[(i - switches - 1) % 11 + 1]
            printf "  - { id: device-%d, name: %s %d, kind: %s }\n", i, names[kind], i, kind
        }
    }
    print "homes:"
    print "  - name: Bench"
    print "    primary: true"
    print "    administrator: { account: owner, name: Owner }"
    print "    rooms:"
    for (r = 1; r <= rooms; r++) printf "      - Room %d\n", r
    print "    accessories:"
    for (i = 1; i <= n; i++)
        printf "      - { id: %s-%d, room: Room %d }\n", i <= switches ? "switch" : "device", i, int((i - 1) / size) + 1
}'
