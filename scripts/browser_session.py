"""Headless Debian chromium driven by selenium through Debian's chromedriver, for homegate's
real-browser tests (issue 16) and scripts/browser-smoke.py.

Both binaries come from Debian (scripts/install-browser.sh), and the paths are given to selenium, so
Selenium Manager never runs and nothing is downloaded. The flags keep chromium off the network: a
test loads a page from 127.0.0.1 and chromium itself contacts nothing else (no update checks,
safe-browsing lists, metrics, sync, translate or DNS pre-fetching).

Run with .build/venv/bin/python (scripts/install-python-tools.sh makes it).
"""

from __future__ import annotations

from pathlib import Path

from selenium import webdriver
from selenium.common.exceptions import StaleElementReferenceException, TimeoutException
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.remote.webdriver import WebDriver
from selenium.webdriver.remote.webelement import WebElement
from selenium.webdriver.support import expected_conditions
from selenium.webdriver.support.ui import WebDriverWait

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"

# Window sizes (CSS pixels at scale 1): a common phone, and a desktop browser.
PHONE = (390, 844)
DESKTOP = (1280, 900)
SIZES = {"phone": PHONE, "desktop": DESKTOP}

# How to run headless as root on a CI machine.
_HEADLESS_FLAGS = [
    "--headless=new",
    "--no-sandbox",  # chromium's sandbox refuses to run as root, and CI runs as root
    "--disable-dev-shm-usage",  # /dev/shm may be small in a container: use /tmp instead
    "--force-device-scale-factor=1",  # screenshots the window size in pixels, whatever the host
    "--hide-scrollbars",  # screenshots that do not depend on the scrollbar style
]

# Nothing but the page under test: no first-run dialogs, and no connection chromium would make on
# its own (component and extension updates, safe browsing, metrics upload, sync, translate, hint
# downloads, crash reports, DNS pre-fetching). The host resolver rules make every host name but
# localhost fail to resolve, so a service these flags forget cannot reach the internet either
# (without them chromium sent 56 DNS queries in 20 s on a page from 127.0.0.1). Chromium still
# connect()s a UDP socket to 2001:4860:4860::8888 to learn whether IPv6 is routed: that sends no
# packet, and the checks pass in a network namespace with only loopback.
_OFFLINE_FLAGS = [
    "--no-first-run",
    "--no-default-browser-check",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-default-apps",
    "--disable-extensions",
    "--disable-sync",
    "--disable-client-side-phishing-detection",
    "--disable-domain-reliability",
    "--disable-breakpad",
    "--no-pings",
    "--metrics-recording-only",
    "--no-proxy-server",
    "--disable-features=Translate,OptimizationHints,MediaRouter,DialMediaRouteProvider,"
    "NetworkTimeServiceQuerying,AutofillServerCommunication,InterestFeedContentSuggestions",
    "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE localhost, EXCLUDE 127.0.0.1",
    "--password-store=basic",  # no desktop keyring to ask
]


def chromium_options(window_size: tuple[int, int] = DESKTOP) -> webdriver.ChromeOptions:
    """The options start_driver uses, for a test that needs to add its own."""
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in _HEADLESS_FLAGS + _OFFLINE_FLAGS:
        options.add_argument(flag)
    width, height = window_size
    options.add_argument(f"--window-size={width},{height}")
    return options


def start_driver(
    window_size: tuple[int, int] = DESKTOP,
    *,
    options: webdriver.ChromeOptions | None = None,
    mobile: bool | None = None,
    driver_log: str | Path | None = None,
    page_load_seconds: float = 30,
) -> WebDriver:
    """Starts headless chromium with a viewport of window_size (PHONE, DESKTOP or any (width,
    height)) and returns its driver. The caller quits it (driver.quit(), or `with start_driver() as
    driver:`). mobile (by default: narrower than 768) emulates a phone's screen; driver_log keeps
    chromedriver's own log, useful when chromium fails to start."""
    for binary in (CHROMIUM, CHROMEDRIVER):
        if not Path(binary).is_file():
            raise RuntimeError(f"{binary} is missing: run scripts/install-browser.sh (or `make test`)")
    service = Service(executable_path=CHROMEDRIVER, log_output=str(driver_log) if driver_log else None)
    driver = webdriver.Chrome(service=service, options=options or chromium_options(window_size))
    try:
        driver.set_page_load_timeout(page_load_seconds)
        set_viewport(driver, window_size, mobile=window_size[0] < 768 if mobile is None else mobile)
    except BaseException:
        driver.quit()
        raise
    return driver


def set_viewport(driver: WebDriver, size: tuple[int, int], *, mobile: bool) -> None:
    """Makes the page's viewport exactly size (CSS pixels, scale 1). --window-size alone is not
    enough: headless chromium keeps a window at least 500 pixels wide and takes its frame off the
    height. mobile also honours <meta name="viewport"> and reports a touch screen, as a phone does."""
    width, height = size
    driver.execute_cdp_cmd(
        "Emulation.setDeviceMetricsOverride",
        {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": mobile},
    )
    if mobile:
        driver.execute_cdp_cmd("Emulation.setTouchEmulationEnabled", {"enabled": True, "maxTouchPoints": 5})


def wait_for_text(driver: WebDriver, locator: tuple[str, str] | str, text: str, seconds: float = 10) -> str:
    """Waits until the element at locator (a (By..., value) pair, or a CSS selector) shows exactly
    text, and returns it. On time-out raises TimeoutError naming the element and what it showed."""
    if isinstance(locator, str):
        locator = (By.CSS_SELECTOR, locator)

    def shows_text(driver: WebDriver) -> bool:
        elements = driver.find_elements(*locator)
        return bool(elements) and elements[0].text == text

    try:
        # The page may replace the element while it is read: look again rather than fail.
        wait = WebDriverWait(
            driver, seconds, poll_frequency=0.05, ignored_exceptions=[StaleElementReferenceException]
        )
        wait.until(shows_text)
    except TimeoutException as error:
        elements = driver.find_elements(*locator)
        shown = repr(elements[0].text) if elements else "no such element"
        message = f"{locator[1]!r} did not show {text!r} within {seconds} s (it shows {shown})"
        raise TimeoutError(message) from error
    return text


def wait_for_element(driver: WebDriver, locator: tuple[str, str] | str, seconds: float = 10) -> WebElement:
    """Waits until the element at locator is present and visible, and returns it."""
    if isinstance(locator, str):
        locator = (By.CSS_SELECTOR, locator)
    try:
        wait = WebDriverWait(driver, seconds, poll_frequency=0.05)
        return wait.until(expected_conditions.visibility_of_element_located(locator))
    except TimeoutException as error:
        raise TimeoutError(f"{locator[1]!r} was not visible within {seconds} s") from error


def save_screenshot(driver: WebDriver, path: str | Path) -> Path:
    """Saves what the window shows as a PNG at path (making its folder), checks that it is one,
    and returns the path."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    png = driver.get_screenshot_as_png()
    if not png.startswith(b"\x89PNG\r\n\x1a\n"):
        raise RuntimeError(f"chromium returned no PNG for {path}")
    path.write_bytes(png)
    return path


def log_in(driver: WebDriver, url: str, account: str) -> None:
    """Logs in to homegate's page at url as account, whose password the tests make its name, and
    waits for the homes page."""
    driver.get(f"{url}/login")
    driver.find_element(By.NAME, "account").send_keys(account)
    driver.find_element(By.NAME, "password").send_keys(account)
    driver.find_element(By.ID, "login").click()
    wait_for_text(driver, "h1", "Your homes")
