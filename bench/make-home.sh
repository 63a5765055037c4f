#!/bin/sh
# Writes the benchmark home as a demo-home YAML file (Config/demo-home.yml's format) on stdout:
# ACCESSORIES virtual switches "Switch 1" ... in rooms "Room 1", "Room 2", ... of ROOM_SIZE each, in
# the home "Bench" administered by the account "owner", and two action sets "Fifty On" / "Fifty Off"
# that write the first 50 switches.
#
# usage: bench/make-home.sh ACCESSORIES [ROOM_SIZE]
set -eu
accessories=${1:?usage: make-home.sh ACCESSORIES [ROOM_SIZE]}
room_size=${2:-20}

awk -v n="$accessories" -v size="$room_size" 'BEGIN {
    rooms = int((n + size - 1) / size)
    fifty = n < 50 ? n : 50
    print "devices:"
    for (i = 1; i <= n; i++) printf "  - { id: switch-%d, name: Switch %d, kind: switch }\n", i, i
    print "homes:"
    print "  - name: Bench"
    print "    primary: true"
    print "    administrator: { account: owner, name: Owner }"
    print "    rooms:"
    for (r = 1; r <= rooms; r++) printf "      - Room %d\n", r
    print "    accessories:"
    for (i = 1; i <= n; i++) printf "      - { id: switch-%d, room: Room %d }\n", i, int((i - 1) / size) + 1
    print "    actionSets:"
    split("On Off", names, " ")
    split("true false", values, " ")
    for (s = 1; s <= 2; s++) {
        printf "      - name: Fifty %s\n        actions:\n", names[s]
        for (i = 1; i <= fifty; i++)
            printf "          - { accessory: Switch %d, service: Switch, characteristic: On, value: %s }\n", i, values[s]
    }
}'
