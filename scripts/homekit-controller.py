#!/usr/bin/env python3
"""A HomeKit controller for the tests: aiohomekit (Home Assistant's controller library) talking to
homegate's HomeKit bridge at a fixed address, without mDNS.

One command a run; each prints JSON lines on stdout and exits 0, or prints {"event": "error", ...}
and exits 1. The pairing is kept in --pairing-file between runs (as Home Assistant keeps it).

  pair CODE                      pair setup, then pair verify; saves the pairing
  accessories                    the accessory database
  get AID.IID[,AID.IID...]       reads
  put AID.IID=JSON[,...]         writes (JSON values: true, 42, 21.5, "text")
  put-raw AID.IID=JSON[,...]     the same PUT, without aiohomekit's look at its cached database
  watch AID.IID[,...] COUNT      subscribes, prints {"event":"subscribed"}, then COUNT events
  list-pairings                  /pairings list
  add-pairing ID KEYHEX admin|user
  remove-pairing ID
  config-number                  the c# the bridge's database has now (reads /accessories twice)
"""

import argparse
import asyncio
import json
import sys

from aiohomekit.controller.ip.connection import HomeKitConnection
from aiohomekit.controller.ip.discovery import IpDiscovery
from aiohomekit.controller.ip.pairing import IpPairing
from aiohomekit.model.feature_flags import FeatureFlags
from aiohomekit.model.status_flags import StatusFlags
from aiohomekit.zeroconf import HomeKitService


def say(**fields):
    print(json.dumps(fields), flush=True)


class Controller:
    """What IpDiscovery and IpPairing ask of aiohomekit's Controller, without its zeroconf."""

    def __init__(self):
        self.pairings = {}

        class Cache:
            def get_map(self, _id):
                return None

            def async_create_or_update_map(self, *args, **kwargs):
                return None

        self._char_cache = Cache()


def service(host, port):
    return HomeKitService(
        name="homegate bridge", id="00:00:00:00:00:00", model="bridge", feature_flags=FeatureFlags(0),
        status_flags=StatusFlags.UNPAIRED, config_num=1, state_num=1, category=2, protocol_version="1.1",
        type="_hap._tcp.local.", address=host, addresses=[host], port=port)


def ids(text):
    return [tuple(int(part) for part in item.split(".")) for item in text.split(",")]


async def paired(args, controller):
    with open(args.pairing_file) as file:
        data = json.load(file)
    data["AccessoryIP"], data["AccessoryIPs"], data["AccessoryPort"] = args.host, [args.host], args.port
    return IpPairing(controller, data)


async def run(args):
    controller = Controller()
    if args.command == "pair":
        discovery = IpDiscovery(controller, service(args.host, args.port))
        try:
            finish = await discovery.async_start_pairing("bridge")
            pairing = await finish(args.arguments[0])
        finally:
            await discovery.close()
        with open(args.pairing_file, "w") as file:
            json.dump(pairing.pairing_data, file)
        accessories = await pairing.list_accessories_and_characteristics()
        say(event="paired", accessories=len(accessories))
        await pairing.close()
        return
    pairing = await paired(args, controller)
    try:
        if args.command == "accessories":
            say(event="accessories", accessories=await pairing.list_accessories_and_characteristics())
        elif args.command == "get":
            values = await pairing.get_characteristics(ids(args.arguments[0]))
            say(event="values", values={f"{aid}.{iid}": value for (aid, iid), value in values.items()})
        elif args.command in ("put", "put-raw"):
            items = []
            for item in args.arguments[0].split(","):
                address, value = item.split("=", 1)
                aid, iid = address.split(".")
                items.append((int(aid), int(iid), json.loads(value)))
            if args.command == "put":
                results = await pairing.put_characteristics(items)
                results = {f"{aid}.{iid}": value for (aid, iid), value in results.items()}
            else:
                await pairing._ensure_connected()
                body = {"characteristics": [{"aid": aid, "iid": iid, "value": value} for aid, iid, value in items]}
                answer = await pairing.connection.put_json("/characteristics", body) or {}
                results = {f"{c['aid']}.{c['iid']}": c for c in answer.get("characteristics", [])}
            say(event="written", results=results)
        elif args.command == "watch":
            wanted = ids(args.arguments[0])
            count = int(args.arguments[1])
            received = asyncio.Queue()
            pairing.dispatcher_connect(lambda event: received.put_nowait(event))
            await pairing.subscribe(wanted)
            say(event="subscribed")
            seen = 0
            while seen < count:
                event = await asyncio.wait_for(received.get(), timeout=120)
                changes = {f"{aid}.{iid}": value for (aid, iid), value in event.items() if value}
                if not changes:
                    continue
                seen += 1
                say(event="event", changes=changes)
        elif args.command == "list-pairings":
            say(event="pairings", pairings=await pairing.list_pairings())
        elif args.command == "add-pairing":
            identifier, key, role = args.arguments
            await pairing.add_pairing(identifier, key, "Admin" if role == "admin" else "User")
            say(event="added")
        elif args.command == "remove-pairing":
            say(event="removed", result=await pairing.remove_pairing(args.arguments[0]))
        else:
            raise SystemExit(f"unknown command {args.command}")
    finally:
        await pairing.close()


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--pairing-file", required=True)
    parser.add_argument("command")
    parser.add_argument("arguments", nargs="*")
    args = parser.parse_args()
    try:
        asyncio.run(run(args))
    except Exception as error:  # the test reads what went wrong
        say(event="error", type=type(error).__name__, message=str(error))
        sys.exit(1)


if __name__ == "__main__":
    main()
