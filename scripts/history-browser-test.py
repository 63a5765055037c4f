"""A characteristic's history plot in a real browser (issue 51): Debian's chromium, headless, driven
by selenium, against `homegate run` with the demo home, whose Floor Lamp's brightness the test set
over MQTT to the values given (Tests/IntegrationTests/WebBrowserTests.swift).

As the guest (password = account name), checks that:
- /history for the lamp's brightness lists each value set in its table (reloading until the
  recorder's batch is written);
- the plot's line has a vertex per row of the table, and the highest value is drawn highest, the
  lowest lowest;
- chromium draws it: the line has a length and a box on the page, and a screenshot of the SVG
  differs from one with the line hidden (a broken SVG draws no line);
- the home page's card shows the lamp's small line of the day, drawn (only its last minutes have
  values, so it is short).
Exits 0 when all hold; otherwise prints what failed and exits 1.

Usage: history-browser-test.py --url http://127.0.0.1:PORT --values 20,80,45 --screenshots DIR
"""

from __future__ import annotations

import argparse
import struct
import sys
import time
import zlib
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from browser_session import DESKTOP, log_in, save_screenshot, start_driver, wait_for_element  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402

HISTORY = ("/history?home=Main%20House&accessory=Floor%20Lamp&service=Lightbulb"
           "&characteristic=Brightness&span=day")

def png_pixels(png: bytes) -> list[bytes]:
    """The pixels of a non-interlaced 8-bit RGB or RGBA PNG (what chromium's screenshots are), each
    as its bytes: enough of PNG for counting colours without an imaging library."""
    assert png.startswith(b"\x89PNG\r\n\x1a\n"), "not a PNG"
    position, data, header = 8, b"", None
    while position < len(png):
        length, kind = struct.unpack(">I4s", png[position:position + 8])
        chunk = png[position + 8:position + 8 + length]
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", chunk)
        elif kind == b"IDAT":
            data += chunk
        position += 12 + length
    width, height, depth, colour, _, _, interlace = header
    assert depth == 8 and colour in (2, 6) and interlace == 0, f"an unexpected PNG: {header}"
    size = 3 if colour == 2 else 4
    raw, stride = zlib.decompress(data), width * size
    rows, previous = [], bytearray(stride)
    for y in range(height):
        start = y * (stride + 1)
        kind, row = raw[start], bytearray(raw[start + 1:start + 1 + stride])
        for i in range(stride):
            left = row[i - size] if i >= size else 0
            up, corner = previous[i], previous[i - size] if i >= size else 0
            if kind == 1:
                row[i] = (row[i] + left) & 0xFF
            elif kind == 2:
                row[i] = (row[i] + up) & 0xFF
            elif kind == 3:
                row[i] = (row[i] + (left + up) // 2) & 0xFF
            elif kind == 4:
                guess = left + up - corner
                nearest = min((abs(guess - left), 0, left), (abs(guess - up), 1, up), (abs(guess - corner), 2, corner))
                row[i] = (row[i] + nearest[2]) & 0xFF
        rows.append(bytes(row))
        previous = row
    return [row[i:i + size] for row in rows for i in range(0, stride, size)]


def table_values(driver) -> list[float]:
    return [float(cell.get_attribute("textContent"))
            for cell in driver.find_elements(By.CSS_SELECTOR, "table.history tbody tr td:nth-child(2)")]


def open_history(driver, url: str, expected: list[float], seconds: float = 15) -> list[float]:
    """Opens the plot, again until its table holds every expected value (the recorder writes a
    batch a second); returns the table's values."""
    deadline = time.monotonic() + seconds
    while True:
        driver.get(url + HISTORY)
        values = table_values(driver)
        if all(value in values for value in expected):
            return values
        if time.monotonic() > deadline:
            raise AssertionError(f"the history table shows {values}, expected {expected} among them")
        time.sleep(0.2)


def vertices(polyline) -> list[tuple[float, float]]:
    pairs = polyline.get_attribute("points").split()
    return [(float(x), float(y)) for x, y in (pair.split(",") for pair in pairs)]


def drawn(driver, element, what: str, at_least: int) -> None:
    """chromium gives the line a length and a box, and draws it: a screenshot of its SVG differs
    in at least at_least pixels from one with the line hidden (a broken SVG draws no line)."""
    length = driver.execute_script("return arguments[0].getTotalLength()", element)
    box = driver.execute_script("const b = arguments[0].getBBox(); return [b.width, b.height]", element)
    assert length > 0 and max(box) > 0, f"{what}: the line has length {length} and box {box}"
    svg = element.find_element(By.XPATH, "ancestor::*[local-name()='svg'][1]")
    driver.execute_script("arguments[0].scrollIntoView({block: 'center'})", svg)
    shown = png_pixels(svg.screenshot_as_png)
    driver.execute_script("arguments[0].style.visibility = 'hidden'", element)
    hidden = png_pixels(svg.screenshot_as_png)
    driver.execute_script("arguments[0].style.visibility = ''", element)
    assert len(shown) == len(hidden), f"{what}: the screenshots differ in size"
    line = sum(1 for one, other in zip(shown, hidden) if one != other)
    assert line >= at_least, f"{what}: the line coloured {line} pixels, expected at least {at_least}"
    print(f"{what}: a line {length:.0f} units long, box {box[0]:.0f}×{box[1]:.0f}, "
          f"{line} of {len(shown)} pixels drawn by it")


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--url", required=True)
    parser.add_argument("--values", required=True, help="the brightness values set, comma-separated")
    parser.add_argument("--screenshots", required=True)
    arguments = parser.parse_args()
    expected = [float(value) for value in arguments.values.split(",")]
    driver = start_driver(DESKTOP)
    try:
        log_in(driver, arguments.url, "guest")
        values = open_history(driver, arguments.url, expected)
        print(f"guest: the history table lists {values}")
        # Present (selenium's visibility test does not apply to an SVG shape); drawn() checks it shows.
        line = driver.find_element(By.CSS_SELECTOR, "figure.history svg.history-chart polyline.line")
        points = vertices(line)
        assert len(points) == len(values), f"{len(points)} vertices for {len(values)} rows: {points}"
        highest, lowest = values.index(max(values)), values.index(min(values))
        heights = [y for _, y in points]
        assert heights[highest] == min(heights) and heights[lowest] == max(heights), \
            f"values {values} drawn at heights {heights}"
        xs = [x for x, _ in points]
        assert xs == sorted(xs), f"the vertices do not go left to right: {xs}"
        drawn(driver, line, "the plot", at_least=100)
        save_screenshot(driver, Path(arguments.screenshots) / "history.png")

        driver.get(f"{arguments.url}/home?name=Main%20House")
        link = wait_for_element(driver, f'a.history[href="{HISTORY.removesuffix("&span=day")}"]')
        drawn(driver, link.find_element(By.CSS_SELECTOR, "svg.sparkline polyline"), "the card's line", at_least=2)
    except Exception as error:  # noqa: BLE001 - every failure is reported the same way
        print(f"FAILED: {type(error).__name__}: {error}", file=sys.stderr)
        return 1
    finally:
        driver.quit()
    print("all history browser checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
