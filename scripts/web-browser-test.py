"""The web page in a real browser (issue 16): Debian's chromium, headless, driven by selenium.

Started by Tests/IntegrationTests/WebBrowserTests.swift against a real broker and `homegate run`
with the demo home (accounts: password = account name). Checks, as a person would:
- the owner logs in, opens Main House, sees the layout controls, switches the Floor Lamp and the
  retained topic changes; a value set over MQTT appears on the open page; a refused rename shows
  its error in words with its code; adds an automation with the "At a time" form (refused without
  a scene, then listed); a screenshot of the page is saved;
- the guest, on a phone-sized screen, sees Main House only, no layout controls, the owner's
  automation without forms, switches the lamp,
  and Lake Cabin does not exist for it.
Exits 0 when all hold; otherwise prints what failed and exits 1.

Usage: web-browser-test.py --url http://127.0.0.1:PORT --broker-port N --screenshots DIR
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from browser_session import (  # noqa: E402
    DESKTOP, PHONE, log_in, save_screenshot, start_driver, wait_for_element, wait_for_text)
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.common.keys import Keys  # noqa: E402
from selenium.common.exceptions import NoSuchElementException, StaleElementReferenceException  # noqa: E402
from selenium.webdriver.support.ui import WebDriverWait  # noqa: E402

BASE = "homegate"
LAMP = f"{BASE}/Main House/Living Room/Floor Lamp/Lightbulb"
LAMP_ON_KEY = "living-lamp/main/On"
BRIGHTNESS_KEY = "living-lamp/main/Brightness"
LOCK = f"{BASE}/Main House/Hallway/Front Door/LockMechanism"
LOCK_TARGET_KEY = "front-lock/main/LockTargetState"


class Check:
    def __init__(self, broker_port: int):
        self.broker_port = broker_port

    def retained(self, topic: str, account: str = "owner") -> str:
        """The retained payload of topic, read with mosquitto_sub as account."""
        result = subprocess.run(
            ["mosquitto_sub", "-h", "127.0.0.1", "-p", str(self.broker_port), "-u", account, "-P", account,
             "-t", topic, "-C", "1", "-W", "10"],
            capture_output=True, text=True, check=True)
        return result.stdout.strip()

    def wait_retained(self, topic: str, expected: str, seconds: float = 10) -> None:
        deadline = time.monotonic() + seconds
        while True:
            value = self.retained(topic)
            if value == expected:
                return
            if time.monotonic() > deadline:
                raise AssertionError(f"{topic} stayed {value!r}, expected {expected!r}")
            time.sleep(0.05)

    def publish(self, topic: str, payload: str, account: str = "owner") -> None:
        subprocess.run(
            ["mosquitto_pub", "-h", "127.0.0.1", "-p", str(self.broker_port), "-u", account, "-P", account,
             "-t", topic, "-m", payload],
            check=True)


def open_home(driver, name: str) -> None:
    driver.find_element(By.LINK_TEXT, name).click()
    wait_for_element(driver, "body[data-live]")
    heading = driver.find_element(By.TAG_NAME, "h1").text
    assert heading.startswith(name), f"the home page's heading is {heading!r}"


def toggle(driver, key: str):
    return driver.find_element(By.CSS_SELECTOR, f'button[data-toggle="{key}"]')


def output(driver, key: str) -> str:
    return f'output[data-k="{key}"]'


def no_raw_numbers(driver, who: str) -> None:
    """No value on the page is a bare number: states are words and measures carry their unit, in the
    values shown and in the choices offered."""
    bare = re.compile(r"^-?\d+(\.\d+)?$")
    texts = [(element.get_attribute("data-k"), element.get_attribute("textContent").strip())
             for element in driver.find_elements(By.CSS_SELECTOR, "output[data-k]")]
    texts += [(f"a choice of {element.find_element(By.XPATH, '..').get_attribute('data-k-input')}",
               element.get_attribute("textContent").strip())
              for element in driver.find_elements(By.CSS_SELECTOR, "select[data-k-input] option")]
    raw = [(key, text) for key, text in texts if bare.match(text)]
    assert not raw, f"{who}: bare numbers on the page: {raw}"
    assert len(texts) > 20, f"{who}: only {len(texts)} values on the page"
    print(f"{who}: {len(texts)} values and choices, none a bare number")


def icons_and_screens(driver, who: str) -> None:
    """Every card shows an icon; prints how many screens the page is long."""
    cards = driver.find_elements(By.CSS_SELECTOR, "article.accessory")
    drawn = [card for card in cards
             if card.find_element(By.CSS_SELECTOR, "h3 svg.icon").size["width"] > 0]
    assert cards and len(drawn) == len(cards), f"{who}: {len(drawn)} of {len(cards)} cards show an icon"
    height = driver.execute_script("return document.documentElement.scrollHeight")
    screen = driver.execute_script("return window.innerHeight")
    print(f"{who}: {len(cards)} cards, each with its icon; the page is {height / screen:.1f} screens long")


def keyboard(driver) -> None:
    """The first Tab reaches the skip link; a focused button shows an outline."""
    driver.find_element(By.TAG_NAME, "body").send_keys(Keys.TAB)
    first = driver.switch_to.active_element
    assert first.text == "Skip to the content", f"the first Tab reaches {first.text!r}"
    for _ in range(40):
        driver.switch_to.active_element.send_keys(Keys.TAB)
        focused = driver.switch_to.active_element
        if focused.tag_name == "button":
            break
    else:
        raise AssertionError("40 Tabs reached no button")
    outline = driver.execute_script(
        "var s = getComputedStyle(document.activeElement); return [s.outlineStyle, parseFloat(s.outlineWidth)];")
    assert outline[0] != "none" and outline[1] >= 2, f"the focused button {focused.text!r} has the outline {outline}"
    print(f"owner: Tab reaches the skip link first, then {focused.text!r} with a {outline[1]:.0f} px outline")


def switch_lamp(driver, check: Check, to_on: bool) -> None:
    """Clicks the lamp's toggle; the page shows the new state from the live stream, and the
    retained topic has it."""
    button = toggle(driver, LAMP_ON_KEY)
    assert button.get_attribute("aria-pressed") == ("false" if to_on else "true"), "the toggle shows the old state"
    button.click()
    wait_for_text(driver, output(driver, LAMP_ON_KEY), "on" if to_on else "off")
    WebDriverWait(driver, 10, poll_frequency=0.05).until(
        lambda d: toggle(d, LAMP_ON_KEY).get_attribute("aria-pressed") == ("true" if to_on else "false"))
    check.wait_retained(f"{LAMP}/On", "true" if to_on else "false")


def add_automation(driver) -> None:
    """The "At a time" form, posted by the script: without a scene it is refused in words with its
    code; with one the automation is added, and the page (reloaded by the live stream) lists it."""
    section = driver.find_element(By.CSS_SELECTOR, "section.automations")
    details = [d for d in section.find_elements(By.CSS_SELECTOR, "details.edit")
               if d.find_element(By.TAG_NAME, "summary").text == "At a time"][0]
    details.find_element(By.TAG_NAME, "summary").click()
    form = details.find_element(By.CSS_SELECTOR, "form.automation")
    form.find_element(By.NAME, "name").send_keys("Browser Wake")
    driver.execute_script("arguments[0].value = '07:15'", form.find_element(By.NAME, "time"))
    form.find_element(By.CSS_SELECTOR, "button[type=submit]").click()
    notice = wait_for_element(driver, "section.automations form.automation + p.answer.error")
    assert notice.text.endswith("(missingParameter)"), f"a form without a scene answers {notice.text!r}"
    print(f"owner: an automation without a scene shows {notice.text!r} next to the form")
    form.find_element(By.CSS_SELECTOR, 'input[name="actionSets[]"][value="Good Morning"]').click()
    form.find_element(By.CSS_SELECTOR, "button[type=submit]").click()
    # The page loads itself again meanwhile: an element of the old one may go stale.
    WebDriverWait(driver, 10, poll_frequency=0.05,
                  ignored_exceptions=(NoSuchElementException, StaleElementReferenceException)).until(
        lambda d: "Browser Wake" in d.find_element(By.CSS_SELECTOR, "ul.automations").text)
    listed = driver.find_element(By.CSS_SELECTOR, "ul.automations").text
    assert "Browser Wake: At 07:15 every day, run Good Morning." in listed, f"the automations read {listed!r}"
    print("owner: the At a time form added 'Browser Wake', listed as 'At 07:15 every day, run Good Morning.'")


def owner(url: str, check: Check, screenshots: Path) -> None:
    driver = start_driver(DESKTOP)
    try:
        log_in(driver, url, "owner")
        open_home(driver, "Main House")
        assert driver.find_elements(By.CSS_SELECTOR, "details.edit"), "the owner has Edit on each accessory"
        assert driver.find_elements(By.CSS_SELECTOR, 'form[data-operation="addRoom"]'), "the owner may add rooms"
        assert driver.find_elements(By.LINK_TEXT, "Health"), "the owner sees the health page's link"
        no_raw_numbers(driver, "owner")
        icons_and_screens(driver, "owner")
        keyboard(driver)

        switch_lamp(driver, check, to_on=True)
        print("owner: the toggle switched the lamp; the retained topic is true")

        # A value changed over MQTT appears on the open page (live, no reload).
        started = time.monotonic()
        check.publish(f"{LAMP}/Brightness/set/owner", "55")
        wait_for_text(driver, output(driver, BRIGHTNESS_KEY), "55 %")
        print(f"owner: brightness 55 set over MQTT was on the page after {time.monotonic() - started:.2f} s")

        # A state is shown in words, also when it arrives live: 0 is "Unsecured", never "0".
        assert driver.find_element(By.CSS_SELECTOR, output(driver, LOCK_TARGET_KEY)).text == "Secured"
        check.publish(f"{LOCK}/LockTargetState/set/owner", "0")
        wait_for_text(driver, output(driver, LOCK_TARGET_KEY), "Unsecured")
        check.publish(f"{LOCK}/LockTargetState/set/owner", "1")
        wait_for_text(driver, output(driver, LOCK_TARGET_KEY), "Secured")
        print("owner: the lock's target set over MQTT reads Unsecured, then Secured")

        # A slider applies when released: no Set button beside it with the script.
        slider = driver.find_element(By.CSS_SELECTOR, f'input[type=range][data-k-input="{BRIGHTNESS_KEY}"]')
        assert not slider.find_element(By.XPATH, "following-sibling::button").is_displayed(), "a Set button beside the slider"
        slider.send_keys(Keys.ARROW_LEFT)
        check.wait_retained(f"{LAMP}/Brightness", "54")
        wait_for_text(driver, output(driver, BRIGHTNESS_KEY), "54 %")
        print("owner: the brightness slider moved with the keyboard applied at once (54 %)")

        save_screenshot(driver, screenshots / "web-page.png")
        driver.execute_cdp_cmd(
            "Emulation.setEmulatedMedia", {"features": [{"name": "prefers-color-scheme", "value": "dark"}]})
        background = driver.execute_script("return getComputedStyle(document.body).backgroundColor")
        assert background == "rgb(20, 24, 28)", f"in the dark the page's background is {background}"
        save_screenshot(driver, screenshots / "web-page-dark.png")
        driver.execute_cdp_cmd("Emulation.setEmulatedMedia", {"features": []})
        print("owner: the page follows the system's dark preference")

        # A refused rename: the answer in words, with its code.
        card = driver.find_element(By.CSS_SELECTOR, 'article[data-accessory="living-lamp"]')
        card.find_element(By.CSS_SELECTOR, "details.edit summary").click()
        rename = card.find_element(By.CSS_SELECTOR, 'form[data-operation="renameAccessory"]')
        rename.find_element(By.NAME, "name").send_keys("Counter Lights")
        rename.find_element(By.CSS_SELECTOR, "button").click()
        notice = wait_for_element(driver, 'article[data-accessory="living-lamp"] form[data-operation="renameAccessory"] + p.answer.error')
        assert "Counter Lights" in notice.text and notice.text.endswith(")"), f"the refusal reads {notice.text!r}"
        print(f"owner: a refused rename shows {notice.text!r} next to the form")

        # Removing asks first; "no" sends nothing.
        card.find_element(By.CSS_SELECTOR, 'form[data-operation="removeAccessory"] button').click()
        alert = WebDriverWait(driver, 10).until(lambda d: d.switch_to.alert)
        assert alert.text == "Remove Floor Lamp from Main House?", f"the question reads {alert.text!r}"
        alert.dismiss()
        assert not card.find_elements(By.CSS_SELECTOR, 'form[data-operation="removeAccessory"] + p.answer'), \
            "a dismissed removal sent nothing"
        check.wait_retained(f"{LAMP}/On", "true")
        print("owner: Remove from home asked first; dismissed, the lamp stays")

        add_automation(driver)

        driver.find_element(By.LINK_TEXT, "Health").click()
        wait_for_text(driver, "#health-broker", "connected")
        devices = driver.find_element(By.ID, "driver-virtual").text
        assert re.fullmatch(r"\d+ accessories, \d+ in a home", devices), f"the simulated devices read {devices!r}"
        print(f"owner: the health page lists the simulated devices: {devices!r}")

        driver.find_element(By.ID, "logout").click()
        wait_for_text(driver, "h1", "Log in")
    finally:
        driver.quit()


def guest(url: str, check: Check, screenshots: Path) -> None:
    driver = start_driver(PHONE)
    try:
        log_in(driver, url, "guest")
        assert driver.find_elements(By.LINK_TEXT, "Main House"), "the guest sees Main House"
        assert not driver.find_elements(By.LINK_TEXT, "Lake Cabin"), "the guest does not see Lake Cabin"
        open_home(driver, "Main House")
        assert not driver.find_elements(By.CSS_SELECTOR, "details.edit"), "a guest has no Edit"
        assert not driver.find_elements(By.CSS_SELECTOR, "form[data-operation]"), "a guest has no layout forms"
        automations = driver.find_element(By.CSS_SELECTOR, "section.automations").text
        assert "Browser Wake" in automations and "Next:" in automations, f"the guest's automations read {automations!r}"
        assert not driver.find_elements(By.LINK_TEXT, "Health"), "the health page is for administrators"
        switch_lamp(driver, check, to_on=False)
        print("guest: the toggle switched the lamp off on a phone-sized screen")
        no_raw_numbers(driver, "guest")
        icons_and_screens(driver, "guest")
        width = driver.execute_script("return document.documentElement.scrollWidth")
        assert width <= PHONE[0], f"the page is {width} px wide on a {PHONE[0]} px screen"
        save_screenshot(driver, screenshots / "web-page-phone.png")
        live_feed_refused(driver, url)
        print("guest: with the session's 8 streams taken, the page says its live updates stopped")
        driver.get(f"{url}/home?name=Lake%20Cabin")
        wait_for_text(driver, "h1", "No such home")
    finally:
        driver.quit()


def live_feed_refused(driver, url: str) -> None:
    """Holds the session's 8 live streams open from outside the browser, then opens the home: its own
    stream is refused (429), and the page says that its values no longer move."""
    # A new session, with none of its streams open (logging out ends the old one's at once).
    driver.find_element(By.ID, "logout").click()
    wait_for_text(driver, "h1", "Log in")
    log_in(driver, url, "guest")
    cookie = driver.get_cookie("homegate_session")["value"]
    streams = []
    try:
        for _ in range(8):
            request = urllib.request.Request(
                f"{url}/home/live?name=Main%20House", headers={"Cookie": f"homegate_session={cookie}"})
            streams.append(urllib.request.urlopen(request, timeout=30))
        open_home(driver, "Main House")
        state = wait_for_element(driver, "#live-state:not([hidden])")
        assert "Live updates stopped" in state.text, f"the live state reads {state.text!r}"
    finally:
        for stream in streams:
            stream.close()


def other_sizes(url: str) -> None:
    """The owner on a phone and the guest on a desktop: each page fits its screen, and each role
    gets its controls (the owner's Edit, none for the guest)."""
    for account, size in (("owner", PHONE), ("guest", DESKTOP)):
        driver = start_driver(size)
        try:
            log_in(driver, url, account)
            open_home(driver, "Main House")
            width = driver.execute_script("return document.documentElement.scrollWidth")
            assert width <= size[0], f"{account}: the page is {width} px wide on a {size[0]} px screen"
            edits = driver.find_elements(By.CSS_SELECTOR, "details.edit")
            assert bool(edits) == (account == "owner"), f"{account}: Edit is {'missing' if not edits else 'shown'}"
            print(f"{account}: Main House fits a {size[0]} px screen")
        finally:
            driver.quit()


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--url", required=True)
    parser.add_argument("--broker-port", type=int, required=True)
    parser.add_argument("--screenshots", required=True)
    arguments = parser.parse_args()
    check = Check(arguments.broker_port)
    screenshots = Path(arguments.screenshots)
    try:
        owner(arguments.url, check, screenshots)
        guest(arguments.url, check, screenshots)
        other_sizes(arguments.url)
    except Exception as error:  # noqa: BLE001 - every failure is reported the same way
        print(f"FAILED: {type(error).__name__}: {error}", file=sys.stderr)
        return 1
    print("all browser checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
