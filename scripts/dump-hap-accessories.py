"""Prints the /accessories body of scripts/hap-accessory.py's bridge exactly as HAP-python builds it
(AccessoryDriver.get_accessories, what its HTTP server answers), without opening a socket. Its output
is the fixture Tests/HAPTests/Fixtures/bridge-accessories.json:

    .build/venv/bin/python scripts/dump-hap-accessories.py > Tests/HAPTests/Fixtures/bridge-accessories.json
"""
import asyncio
import importlib.util
import json
import os
import sys
import tempfile

from pyhap.accessory_driver import AccessoryDriver

here = os.path.dirname(os.path.abspath(__file__))
sys.argv = [sys.argv[0]]
spec = importlib.util.spec_from_file_location("hap_accessory", os.path.join(here, "hap-accessory.py"))
accessories = importlib.util.module_from_spec(spec)
spec.loader.exec_module(accessories)


async def main():
    state = os.path.join(tempfile.mkdtemp(), "state")
    driver = AccessoryDriver(
        address="127.0.0.1", port=0, pincode=b"031-45-154", persist_file=state,
        mac="1A:2B:3C:4D:5E:6F", advertise=False)
    bridge = accessories.TestBridge(driver, "Test Bridge")
    bridge.add_accessory(accessories.Lightbulb(driver, "Light"))
    bridge.add_accessory(accessories.Switch(driver, "Switch"))
    bridge.add_accessory(accessories.TemperatureSensor(driver, "Temperature"))
    driver.add_accessory(accessory=bridge)
    print(json.dumps(driver.get_accessories(), indent=1, sort_keys=True))


asyncio.run(main())
