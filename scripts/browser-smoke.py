#!/usr/bin/env python3
"""Proves the real-browser chain works on this machine: Debian's headless chromium, driven by
selenium (from .build/venv) through Debian's chromedriver, loads a page from a local http.server on
127.0.0.1, a form is filled and submitted, the page's JavaScript changes a text, and a PNG
screenshot is saved. Exits 0 when all of that happened, 1 with the failing step otherwise.

    .build/venv/bin/python scripts/browser-smoke.py [--size phone|desktop|WIDTHxHEIGHT] SCREENSHOT.png
"""

from __future__ import annotations

import argparse
import http.server
import signal
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

try:
    from browser_session import SIZES, save_screenshot, start_driver, wait_for_element, wait_for_text
    from selenium.webdriver.common.by import By
except ImportError as error:
    sys.exit(f"browser-smoke: FAILED importing selenium ({error}): run scripts/install-python-tools.sh "
             "and this script with .build/venv/bin/python")

NAME = "Kitchen lamp"
EXPECTED = f"Renamed to {NAME}"

# The page: a form whose submit handler (no page load) writes the name into #status, so seeing the
# text proves JavaScript ran after a real click. The viewport's width is shown for the screenshot.
PAGE = f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>homegate browser smoke</title>
<style>
  body {{ font-family: sans-serif; margin: 1.5rem; background: #f4f6f8; color: #1d2630; }}
  form {{ display: flex; flex-wrap: wrap; gap: .5rem; }}
  input {{ flex: 1 1 12rem; font-size: 1rem; padding: .5rem; }}
  button {{ font-size: 1rem; padding: .5rem 1rem; background: #2563eb; color: white;
            border: 0; border-radius: 4px; }}
  #status {{ margin-top: 1rem; padding: .75rem; border-radius: 4px; background: #fde68a; }}
  #status.done {{ background: #bbf7d0; }}
</style></head>
<body>
<h1>homegate</h1>
<form id="rename">
  <label for="name">Accessory name</label>
  <input id="name" name="name" autocomplete="off">
  <button id="save" type="submit">Save</button>
</form>
<p id="status">Waiting</p>
<p id="viewport"></p>
<script>
  document.getElementById("viewport").textContent = "viewport " + innerWidth + "×" + innerHeight;
  document.getElementById("rename").addEventListener("submit", (event) => {{
    event.preventDefault();
    const status = document.getElementById("status");
    // Later than the click, as an answer from the gateway would be: the wait must really wait.
    setTimeout(() => {{
      status.textContent = "Renamed to " + document.getElementById("name").value;
      status.className = "done";
    }}, 200);
  }});
</script>
</body></html>
""".encode()


class PageHandler(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        if self.path != "/":
            self.send_error(404)
            return
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(PAGE)))
        self.end_headers()
        self.wfile.write(PAGE)

    def log_message(self, format: str, *args) -> None:  # quiet: the smoke check prints its own lines
        pass


def window_size(text: str) -> tuple[int, int]:
    if text in SIZES:
        return SIZES[text]
    try:
        width, height = (int(part) for part in text.lower().split("x"))
        return width, height
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not phone, desktop or WIDTHxHEIGHT") from None


def give_up(*_) -> None:
    raise TimeoutError("the smoke check took over 120 s")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("screenshot", type=Path, help="where to save the PNG")
    parser.add_argument(
        "--size", type=window_size, default="phone", help="phone (390x844), desktop (1280x900) or WxH"
    )
    parser.add_argument("--driver-log", type=Path, help="keep chromedriver's log here")
    args = parser.parse_args()
    size = args.size  # argparse applies window_size to the default too

    # Never hang CI: the whole check is over in seconds when it works.
    signal.signal(signal.SIGALRM, give_up)
    signal.alarm(120)

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), PageHandler)  # port 0: a free port
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}/"

    step = "starting chromium"
    driver = None
    try:
        began = time.monotonic()
        driver = start_driver(size, driver_log=args.driver_log)
        started = time.monotonic()
        step = f"loading {url}"
        driver.get(url)
        loaded = time.monotonic()
        step = "filling the form"
        field = wait_for_element(driver, (By.ID, "name"))
        field.clear()
        field.send_keys(NAME)
        driver.find_element(By.ID, "save").click()
        step = "waiting for the page's JavaScript to change #status"
        wait_for_text(driver, (By.ID, "status"), EXPECTED)
        changed = time.monotonic()
        step = f"saving the screenshot to {args.screenshot}"
        save_screenshot(driver, args.screenshot)
        step = "quitting chromium"
        driver.quit()
        driver = None
        done = time.monotonic()
    except Exception as error:
        # A WebDriverException's msg is chromedriver's message without its stack of <unknown>s.
        message = getattr(error, "msg", None) or str(error)
        print(f"browser-smoke: FAILED {step}: {type(error).__name__}: {message}".rstrip(), file=sys.stderr)
        if args.driver_log:
            print(f"browser-smoke: chromedriver's log is {args.driver_log}", file=sys.stderr)
        return 1
    finally:
        signal.alarm(0)
        if driver is not None:
            try:
                driver.quit()
            except Exception:
                pass
        server.shutdown()
        server.server_close()

    print(
        f"browser-smoke: ok at {size[0]}x{size[1]}: chromium started in {started - began:.2f} s, "
        f"page loaded in {loaded - started:.2f} s, form to text in {changed - loaded:.2f} s, "
        f"screenshot and quit in {done - changed:.2f} s; screenshot {args.screenshot}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
