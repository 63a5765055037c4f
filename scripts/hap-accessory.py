#!/usr/bin/env python3
"""A HAP-python bridge for homegate's HAP tests: a real HomeKit accessory on loopback.

Usage: hap-accessory.py --name NAME --port PORT --setup-code XXX-XX-XXX --state-dir DIR [--doorbell]
       [--owned-names] [--extra-outlet] [--without-switch] [--all-kinds] [--bench-home N]

The bridge holds a Lightbulb (On, Brightness), a Switch and a TemperatureSensor (and with
--doorbell a Doorbell, whose button SIGUSR2 presses once; with --owned-names accessories named as
people's devices are, and a Panel whose two Switch services name themselves; --extra-outlet and
--without-switch change the bridge's list, as a bridge that was reconfigured; --bench-home N serves
instead the N accessories of bench/make-bridge-home.sh N, for the benchmark). It listens on
127.0.0.1 only and does not advertise over mDNS, so nothing leaves loopback.
Standard output carries one JSON object a line:
  {"event": "ready", "port": P, "pairing_id": "..."}        once the HAP server listens
  {"event": "write", "accessory": A, "characteristic": C, "value": V}
                                                              for every write a callback receives
  {"event": "changed", "accessory": "Temperature", "characteristic": "CurrentTemperature", "value": V}
                                                              after SIGUSR1, which warms the sensor
                                                              by 0.5 (an event for subscribed controllers)
  {"event": "pressed", "accessory": "Doorbell"}              after SIGUSR2 (a single press)
  {"event": "read", "ids": ["aid.iid", ...]}                 for every GET /characteristics
Logs go to standard error. SIGTERM stops the bridge.
"""

import argparse
import json
import logging
import os
import signal
import sys

from urllib.parse import parse_qs

from pyhap.accessory import Accessory, Bridge
from pyhap.accessory_driver import AccessoryDriver
from pyhap.const import (
    CATEGORY_LIGHTBULB,
    CATEGORY_OUTLET,
    CATEGORY_SENSOR,
    CATEGORY_SWITCH,
    CATEGORY_VIDEO_DOOR_BELL,
)


def emit(**fields):
    """Writes one JSON line to standard output at once."""
    sys.stdout.write(json.dumps(fields, sort_keys=True) + "\n")
    sys.stdout.flush()


def count_reads():
    """Emits {"event": "read", "ids": [...]} for every GET /characteristics, so a test can count
    how many requests a controller's read took."""
    from pyhap.hap_handler import HAPServerHandler

    handle = HAPServerHandler.handle_get_characteristics

    def counted(self):
        emit(event="read", ids=parse_qs(self.parsed_url.query).get("id", [""])[0].split(","))
        return handle(self)

    HAPServerHandler.handle_get_characteristics = counted


def reporter(accessory, characteristic):
    def report(value):
        emit(event="write", accessory=accessory, characteristic=characteristic, value=value)

    return report


class Lightbulb(Accessory):
    category = CATEGORY_LIGHTBULB

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        service = self.add_preload_service("Lightbulb", chars=["On", "Brightness"])
        service.configure_char("On", setter_callback=reporter(self.display_name, "On"))
        service.configure_char("Brightness", setter_callback=reporter(self.display_name, "Brightness"))


class Switch(Accessory):
    category = CATEGORY_SWITCH

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        service = self.add_preload_service("Switch")
        service.configure_char("On", setter_callback=reporter(self.display_name, "On"))


class TemperatureSensor(Accessory):
    category = CATEGORY_SENSOR

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        service = self.add_preload_service("TemperatureSensor")
        self.temperature = service.configure_char("CurrentTemperature", value=21.5)


class Outlet(Accessory):
    category = CATEGORY_OUTLET

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        service = self.add_preload_service("Outlet")
        service.configure_char("On", setter_callback=reporter(self.display_name, "On"))


class ContactSensor(Accessory):
    category = CATEGORY_SENSOR

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.add_preload_service("ContactSensor")


class Panel(Accessory):
    """Two switches whose services the device names itself, with characters no topic level takes."""

    category = CATEGORY_SWITCH

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        for name in ("Switch #1", "Main/Light+"):
            service = self.add_preload_service("Switch", chars=["Name"], unique_id=name)
            service.configure_char("Name", value=name)
            service.configure_char("On", setter_callback=reporter(name, "On"))


# Names people's devices have (--owned-names): none is a valid topic level as it is, two are the
# same, and one is taken in the demo's Main House already.
OWNED_NAMES = [
    (Lightbulb, "Fan-2 (Bedroom)"), (ContactSensor, "Door/Window"), (ContactSensor, "Eve Door & Window 1A2B"),
    (Lightbulb, "Nanoleaf 52:A1"), (Lightbulb, "Lamp #2"), (Switch, "Spot+"), (Lightbulb, "Hue-Lamp 1"),
    (Lightbulb, "Lamp "), (Outlet, "Outlet"), (Outlet, "Outlet"), (Lightbulb, "Floor Lamp"), (Panel, "Panel"),
]


# One accessory of each kind people own (--all-kinds), with every characteristic its service may
# have, as HAP-python's resources list them.
ALL_KINDS = [
    "AirPurifier", "AirQualitySensor", "BatteryService", "CarbonDioxideSensor", "CarbonMonoxideSensor",
    "ContactSensor", "Door", "Fanv2", "Faucet", "FilterMaintenance", "GarageDoorOpener", "HeaterCooler",
    "HumidifierDehumidifier", "HumiditySensor", "IrrigationSystem", "LeakSensor", "LightSensor", "Lightbulb",
    "LockMechanism", "MotionSensor", "OccupancySensor", "Outlet", "SecuritySystem", "Slat", "SmokeSensor",
    "Speaker", "Switch", "TemperatureSensor", "Thermostat", "Valve", "Window", "WindowCovering",
]


class Kind(Accessory):
    """An accessory with one service of `kind` and all of that service's optional characteristics."""

    def __init__(self, driver, kind, aid):
        super().__init__(driver, "".join(" " + c if c.isupper() else c for c in kind).strip(), aid=aid)
        optional = driver.loader.serv_types[kind]["OptionalCharacteristics"]
        self.add_preload_service(kind, chars=[c for c in optional if c != "Name"])


# bench/make-bridge-home.sh's home (--bench-home N): the first half switches "Switch 1" ..., the others
# these kinds in turn, with the characteristics homegate's virtual devices of the same kind have
# (Sources/VirtualDevices/Virtual/VirtualDevice.swift). Keep the three lists alike.
BENCH_KINDS = [
    ("Light", "Lightbulb", ["On", "Brightness", "Hue", "Saturation", "ColorTemperature"]),
    ("Outlet", "Outlet", ["On", "OutletInUse"]),
    ("Thermostat", "Thermostat", []),
    ("Lock", "LockMechanism", []),
    ("Garage Door", "GarageDoorOpener", []),
    ("Blinds", "WindowCovering", ["HoldPosition"]),
    ("Fan", "Fan", ["On", "RotationSpeed", "RotationDirection"]),
    ("Temperature", "TemperatureSensor", []),
    ("Humidity", "HumiditySensor", []),
    ("Motion", "MotionSensor", []),
    ("Contact", "ContactSensor", []),
]


class BenchDevice(Accessory):
    """One accessory of the benchmark's home: a service of `service` with `chars` besides the required ones."""

    def __init__(self, driver, name, service, chars, aid):
        super().__init__(driver, name, aid=aid)
        required = driver.loader.serv_types[service]["RequiredCharacteristics"]
        self.add_preload_service(service, chars=[c for c in chars if c not in required] or None)


def bench_home(driver, count):
    switches = count // 2
    # No setter callbacks here (nor count_reads): HAP-python as it comes, printing nothing per request.
    accessories = [BenchDevice(driver, f"Switch {i}", "Switch", [], aid=i + 1) for i in range(1, switches + 1)]
    for i in range(switches + 1, count + 1):
        name, service, chars = BENCH_KINDS[(i - switches - 1) % len(BENCH_KINDS)]
        accessories.append(BenchDevice(driver, f"{name} {i}", service, chars, aid=i + 1))
    return accessories


class Doorbell(Accessory):
    category = CATEGORY_VIDEO_DOOR_BELL

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        service = self.add_preload_service("Doorbell")
        self.press = service.configure_char("ProgrammableSwitchEvent")


class TestBridge(Bridge):
    """A bridge that says when it listens instead of printing a QR code."""

    def setup_message(self):
        pass

    async def run(self):
        server = self.driver.http_server.server
        port = server.sockets[0].getsockname()[1] if server and server.sockets else self.driver.state.port
        emit(event="ready", port=port, pairing_id=self.driver.state.mac)
        await super().run()


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--name", required=True, help="the bridge's name")
    parser.add_argument("--port", type=int, required=True, help="the TCP port on 127.0.0.1")
    parser.add_argument("--setup-code", required=True, help="the setup code, XXX-XX-XXX")
    parser.add_argument("--state-dir", required=True, help="the folder of the bridge's state file")
    parser.add_argument("--pairing-id", default="1A:2B:3C:4D:5E:6F", help="the accessory's pairing id")
    parser.add_argument("--doorbell", action="store_true", help="add a Doorbell that SIGUSR2 presses")
    parser.add_argument("--extra-outlet", action="store_true", help="add 'Outlet 27' (aid 27)")
    parser.add_argument(
        "--all-kinds", action="store_true",
        help="add one accessory of each of 32 kinds, with every optional characteristic (aids 100 on)")
    parser.add_argument("--without-switch", action="store_true", help="leave the Switch (aid 3) out")
    parser.add_argument(
        "--owned-names", action="store_true",
        help="add accessories named as people's devices are (Fan-2 (Bedroom), Door/Window, two Outlets, ...)")
    parser.add_argument(
        "--bench-home", type=int, default=0, metavar="N",
        help="serve bench/make-bridge-home.sh's N accessories (aids 2 to N+1) instead of the test bridge's")
    parser.add_argument(
        "--event-window", type=float, default=None,
        help="seconds HAP-python gathers events before sending them (its default is 0.5); 0 for the benchmark")
    arguments = parser.parse_args()
    if arguments.event_window is not None:
        import pyhap.hap_protocol

        pyhap.hap_protocol.EVENT_COALESCE_TIME_WINDOW = arguments.event_window

    logging.basicConfig(stream=sys.stderr, level=os.environ.get("HAP_LOG_LEVEL", "WARNING"))
    if not arguments.bench_home:
        count_reads()
    os.makedirs(arguments.state_dir, exist_ok=True)
    driver = AccessoryDriver(
        address="127.0.0.1",
        port=arguments.port,
        pincode=arguments.setup_code.encode(),
        persist_file=os.path.join(arguments.state_dir, "accessory.state"),
        mac=arguments.pairing_id,
        advertise=False,
    )
    bridge = TestBridge(driver, arguments.name)
    if arguments.bench_home:
        for accessory in bench_home(driver, arguments.bench_home):
            bridge.add_accessory(accessory)
        driver.add_accessory(accessory=bridge)
        signal.signal(signal.SIGTERM, driver.signal_handler)
        driver.start()
        return
    # Fixed aids, as a bridge keeps them: an accessory added or removed leaves the others' alone.
    bridge.add_accessory(Lightbulb(driver, "Light", aid=2))
    if not arguments.without_switch:
        bridge.add_accessory(Switch(driver, "Switch", aid=3))
    sensor = TemperatureSensor(driver, "Temperature", aid=4)
    bridge.add_accessory(sensor)
    if arguments.extra_outlet:
        bridge.add_accessory(Outlet(driver, "Outlet 27", aid=27))
    doorbell = Doorbell(driver, "Doorbell", aid=5) if arguments.doorbell else None
    if doorbell:
        bridge.add_accessory(doorbell)
    if arguments.all_kinds:
        for index, kind in enumerate(ALL_KINDS):
            bridge.add_accessory(Kind(driver, kind, aid=100 + index))
    if arguments.owned_names:
        for kind, name in OWNED_NAMES:
            bridge.add_accessory(kind(driver, name))
    driver.add_accessory(accessory=bridge)
    signal.signal(signal.SIGTERM, driver.signal_handler)

    def warm(*_):
        def change():
            value = sensor.temperature.value + 0.5
            sensor.temperature.set_value(value)
            emit(event="changed", accessory="Temperature", characteristic="CurrentTemperature", value=value)

        driver.loop.call_soon_threadsafe(change)

    signal.signal(signal.SIGUSR1, warm)

    def ring(*_):
        def press():
            doorbell.press.set_value(0)
            emit(event="pressed", accessory="Doorbell")

        driver.loop.call_soon_threadsafe(press)

    if doorbell:
        signal.signal(signal.SIGUSR2, ring)
    driver.start()


if __name__ == "__main__":
    main()
