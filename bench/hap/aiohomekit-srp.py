#!/usr/bin/env python3
"""Pair setup's controller share in aiohomekit (Home Assistant's HomeKit controller library), for
bench/run.sh beside homegate's own (hap-bench's srpControllerMedianMs): SRP's arithmetic alone, a key
pair, the premaster secret, the session key and the proof, against an accessory's key made
beforehand; the median of 20 in milliseconds, printed as {"aiohomekitSrpMedianMs": M}.
"""

import json
import os
import statistics
import time

from aiohomekit.crypto.srp import GENERATOR_VALUE, HK_KEY_LENGTH, MODULUS_VALUE, SrpClient


def main() -> None:
    times = []
    for _ in range(20):
        accessory_key = pow(GENERATOR_VALUE, int.from_bytes(os.urandom(32), "big"), MODULUS_VALUE)
        salt = bytearray(os.urandom(16))
        started = time.perf_counter()
        client = SrpClient("Pair-Setup", "031-45-154")
        client.get_public_key_bytes()
        client.set_salt(salt)
        client.set_server_public_key(accessory_key.to_bytes(HK_KEY_LENGTH, "big"))
        client.get_proof_bytes()
        client.get_session_key_bytes()
        times.append((time.perf_counter() - started) * 1000)
    print(json.dumps({"aiohomekitSrpMedianMs": round(statistics.median(times), 2)}, separators=(",", ":")))


if __name__ == "__main__":
    main()
