"""Runs a real Home Assistant (2025.4, from .build/ha-venv) against a broker, for the test that checks
the gateway's MQTT discovery in it (Tests/IntegrationTests/HomeAssistantRealTests.swift).

Usage: .build/ha-venv/bin/python scripts/home-assistant-run.py --port BROKER_PORT --config DIR

It writes a configuration (the MQTT integration as a config entry for the broker, discovery on;
mqtt_statestream so that every entity's state comes back out on `hastate/...`; the MQTT loggers at
WARNING) into DIR, starts Home Assistant there, prints `{"event":"ready"}` once it is up and
connected, and answers checkpoints asked for over MQTT:

- `homegate-test/checkpoint` `N ENTITIES`: waits until Home Assistant has at least ENTITIES entities
  and has taken every MQTT message sent before the request (a sentinel entity of the script's own
  takes the value N last, and its marker reaches the log), then answers on
  `homegate-test/checkpoint/answer`
  `{"event":"checkpoint","n":N,"warnings":[...],"states":{"<entity_id>":"<state>"}}`, with the
  warnings and errors of the MQTT integration and of templates logged since the last checkpoint
  (or `{"event":"error","message":...}`).

SIGTERM stops Home Assistant and the script.
"""

import argparse
import json
import os
import queue
import re
import signal
import socket
import subprocess
import sys
import threading
import time

import paho.mqtt.client as mqtt

SENTINEL_CONFIG = "homeassistant/sensor/homegate_test_sentinel/config"
SENTINEL_TOPIC = "homegate-test/sentinel"
SENTINEL_ENTITY = "sensor.homegate_test_sentinel"
# Its attributes topic: a payload that is not JSON is a warning in Home Assistant's log, so the
# marker of a checkpoint in the log says that every line logged before it is in the file.
MARKER_TOPIC = "homegate-test/marker"
CHECKPOINT_TOPIC = "homegate-test/checkpoint"
ANSWER_TOPIC = "homegate-test/checkpoint/answer"
# What counts against the gateway: the MQTT integration's own warnings and the template warnings
# its value templates cause (`Template variable warning: ... when rendering '{{ value_json.x }}'`).
WATCHED = re.compile(r"^\S+ \S+ (WARNING|ERROR) \(\S+\) \[(homeassistant\.components\.mqtt[^\]]*|homeassistant\.helpers\.template)\] (.*)$")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def write_config(directory, port):
    os.makedirs(os.path.join(directory, ".storage"), exist_ok=True)
    with open(os.path.join(directory, "configuration.yaml"), "w") as f:
        f.write(f"""homeassistant:
  name: homegate test
  latitude: 52.5
  longitude: 13.4
  elevation: 0
  unit_system: metric
  time_zone: UTC
  country: DE
  currency: EUR
http:
  server_host: 127.0.0.1
  server_port: {free_port()}
logger:
  default: error
  logs:
    homeassistant.components.mqtt: warning
    homeassistant.helpers.template: warning
mqtt_statestream:
  base_topic: hastate
  exclude:
    # The backup integration's own sensors, the only entities here that are not MQTT's.
    entity_globs:
      - sensor.backup_*
""")
    entry = {
        "entry_id": "01JHOMEGATETESTMQTT000000", "version": 1, "minor_version": 2, "domain": "mqtt",
        "title": "127.0.0.1",
        "data": {"broker": "127.0.0.1", "port": port, "username": "homeassistant", "password": "homeassistant"},
        "options": {"discovery": True, "discovery_prefix": "homeassistant"},
        "pref_disable_new_entities": False, "pref_disable_polling": False, "source": "user", "unique_id": None,
        "disabled_by": None, "created_at": "2026-01-01T00:00:00+00:00", "modified_at": "2026-01-01T00:00:00+00:00",
        "discovery_keys": {}, "subentries": [],
    }
    with open(os.path.join(directory, ".storage", "core.config_entries"), "w") as f:
        json.dump({"version": 1, "minor_version": 5, "key": "core.config_entries", "data": {"entries": [entry]}}, f)


class Observer:
    """Follows `hastate/#` (every entity's state, as mqtt_statestream publishes it) and Home Assistant's
    status."""

    def __init__(self, port):
        self.states = {}
        self.online = threading.Event()
        self.changed = threading.Condition()
        self.client = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id="homegate-ha-observer")
        self.requests = queue.Queue()
        self.client.on_connect = lambda c, u, f, rc, p: c.subscribe(
            [("hastate/#", 1), ("homeassistant/status", 1), (CHECKPOINT_TOPIC, 1)])
        self.client.on_message = self.message
        self.client.connect("127.0.0.1", port)
        self.client.loop_start()

    def message(self, client, userdata, message):
        payload = message.payload.decode("utf-8", "replace")
        if message.topic == CHECKPOINT_TOPIC:
            self.requests.put(payload)
            return
        if message.topic == "homeassistant/status":
            if payload == "online":
                self.online.set()
            return
        parts = message.topic.split("/")
        # hastate/<domain>/<object_id>/state
        if len(parts) == 4 and parts[3] == "state":
            with self.changed:
                self.states[f"{parts[1]}.{parts[2]}"] = payload
                self.changed.notify_all()

    def wait(self, condition, timeout):
        deadline = time.monotonic() + timeout
        with self.changed:
            while not condition(self.states):
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self.changed.wait(left)
        return True


def follow_log(path, lines, markers):
    """Puts every watched line Home Assistant writes to its log file into `lines`, and the checkpoint
    markers into `markers`."""
    while not os.path.exists(path):
        time.sleep(0.1)
    with open(path, errors="replace") as f:
        while True:
            line = f.readline()
            if not line:
                time.sleep(0.1)
                continue
            match = WATCHED.match(line.rstrip("\n"))
            if not match:
                continue
            marker = re.search(r"homegate-marker-(\S+)", match.group(3))
            if marker:
                markers.put(marker.group(1))
            else:
                lines.put(f"{match.group(1)} [{match.group(2)}] {match.group(3)}")


def say(event, observer=None):
    print(json.dumps(event), flush=True)
    if observer is not None:
        observer.client.publish(ANSWER_TOPIC, json.dumps(event), qos=1)


class Stop(Exception):
    pass


def stop(signum, frame):
    raise Stop()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--config", required=True)
    parser.add_argument("--timeout", type=float, default=240)
    arguments = parser.parse_args()
    signal.signal(signal.SIGTERM, stop)
    write_config(arguments.config, arguments.port)
    log = os.path.join(arguments.config, "home-assistant.log")
    hass = subprocess.Popen(
        [sys.executable, "-m", "homeassistant", "-c", arguments.config, "--skip-pip", "--log-file", log],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    warnings = queue.Queue()
    markers = queue.Queue()
    threading.Thread(target=follow_log, args=(log, warnings, markers), daemon=True).start()
    observer = Observer(arguments.port)
    try:
        if not observer.online.wait(arguments.timeout):
            say({"event": "error", "message": "Home Assistant did not come online on MQTT"})
            return 1
        say({"event": "ready"})
        sentinel_announced = False
        while True:
            try:
                request = observer.requests.get(timeout=1)
            except queue.Empty:
                continue
            words = request.split()
            if len(words) != 2:
                say({"event": "error", "message": f"a checkpoint is 'N ENTITIES', not {request!r}"}, observer)
                continue
            n, entities = words[0], int(words[1])
            # Every discovered entity is added (each states once it is), so its subscription is made ...
            if not observer.wait(lambda s: len([e for e in s if e != SENTINEL_ENTITY]) >= entities, arguments.timeout):
                say({"event": "error", "message": f"Home Assistant has {len(observer.states)} entities, not {entities}",
                     "states": observer.states}, observer)
                continue
            # ... before the sentinel's, whose value then comes after every message sent before it.
            if not sentinel_announced:
                observer.client.publish(SENTINEL_CONFIG, json.dumps({
                    "name": "homegate test sentinel", "unique_id": "homegate_test_sentinel",
                    "object_id": "homegate_test_sentinel", "state_topic": SENTINEL_TOPIC,
                    "json_attributes_topic": MARKER_TOPIC}), qos=1, retain=True).wait_for_publish()
                sentinel_announced = True
            observer.client.publish(MARKER_TOPIC, f"homegate-marker-{n}", qos=1, retain=True).wait_for_publish()
            observer.client.publish(SENTINEL_TOPIC, n, qos=1, retain=True).wait_for_publish()
            if not observer.wait(lambda s: s.get(SENTINEL_ENTITY) == n, arguments.timeout):
                say({"event": "error", "message": f"the sentinel did not reach {n}"}, observer)
                continue
            try:
                while markers.get(timeout=arguments.timeout) != n:
                    pass
            except queue.Empty:
                say({"event": "error", "message": f"the log has no marker {n}"}, observer)
                continue
            seen = []
            while not warnings.empty():
                seen.append(warnings.get())
            states = {k: v for k, v in observer.states.items() if k != SENTINEL_ENTITY}
            say({"event": "checkpoint", "n": n, "warnings": seen, "states": states}, observer)
    except Stop:
        pass
    finally:
        for topic in (SENTINEL_CONFIG, MARKER_TOPIC, SENTINEL_TOPIC):
            observer.client.publish(topic, b"", qos=1, retain=True).wait_for_publish(timeout=5)
        observer.client.loop_stop()
        hass.send_signal(signal.SIGTERM)
        try:
            hass.wait(timeout=60)
        except subprocess.TimeoutExpired:
            hass.kill()
    return 0


if __name__ == "__main__":
    sys.exit(main())
