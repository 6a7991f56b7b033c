"""The server's pages in headless Chromium: the status page at / lists the demo models, shows an
inference within a few seconds without being reloaded, and logs no console errors; the API docs
page at /v2/docs renders the server's OpenAPI document from the server's own Swagger UI.

MK_HTTP is the server (host:port); MK_CHROMIUM and MK_CHROMEDRIVER are Debian's browser and driver.
Nothing is downloaded: the driver is given by path."""
import json
import os
import urllib.request

import pytest
from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

BASE = "http://" + os.environ["MK_HTTP"]
DEMO_MODELS = ["convnet", "iris", "mlp-medium", "mlp-small", "types"]


@pytest.fixture(scope="module")
def browser():
    options = webdriver.ChromeOptions()
    options.binary_location = os.environ["MK_CHROMIUM"]
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"):
        options.add_argument(arg)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(os.environ["MK_CHROMEDRIVER"]), options=options)
    driver.set_page_load_timeout(30)
    driver.set_script_timeout(30)
    yield driver
    driver.quit()


def console_errors(driver):
    return [e for e in driver.get_log("browser") if e["level"] == "SEVERE"]


# the page swaps its content every two seconds: read a table in one script, never element by element
TABLE_CELLS = """
return Array.from(document.querySelectorAll('#' + arguments[0] + ' tr'))
    .map(r => Array.from(r.querySelectorAll('td')).map(c => c.textContent))
    .filter(cells => cells.length > 0);
"""


def rows(driver, table):
    return driver.execute_script(TABLE_CELLS, table)


def model_row(driver, name, version="1"):
    """The cells of the models table's row for name and version, as text."""
    for cells in rows(driver, "models"):
        if cells[:2] == [name, version]:
            return cells
    return None


def test_status_page_lists_demo_models(browser):
    browser.get(BASE + "/")
    assert browser.title == "ModelKeeper status"
    listed = {cells[0] for cells in rows(browser, "models")}
    assert set(DEMO_MODELS) <= listed, listed
    assert browser.find_element(By.ID, "chart").is_displayed()
    assert console_errors(browser) == []


def test_status_page_updates_after_an_inference(browser):
    browser.get(BASE + "/v2/status")
    browser.execute_script("window.notReloaded = true;")
    assert model_row(browser, "mlp-small")[2] == "UNAVAILABLE"
    body = json.dumps({"inputs": [
        {"name": "input", "datatype": "FP32", "shape": [1, 8], "data": [0.5] * 8}]}).encode()
    request = urllib.request.Request(
        BASE + "/v2/models/mlp-small/versions/1/infer", data=body,
        headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=60) as r:
        assert r.status == 200

    def shows_the_run(driver):
        row = model_row(driver, "mlp-small")
        return row is not None and row[2] == "READY" and row[7] not in ("", "0.0")

    WebDriverWait(browser, 20, poll_frequency=0.25).until(shows_the_run)
    assert browser.execute_script("return window.notReloaded === true;"), "the page was reloaded"
    events = rows(browser, "events")
    assert any(cells[1:3] == ["mlp-small/1", "loaded"] for cells in events), events
    assert browser.execute_script("return document.getElementById('live').textContent") == "live"
    assert console_errors(browser) == []


def test_docs_page_renders_the_openapi_document(browser):
    browser.get(BASE + "/v2/docs")
    WebDriverWait(browser, 30, poll_frequency=0.25).until(
        lambda d: d.execute_script(
            "return document.querySelectorAll('.opblock-summary-path').length") > 10)
    title = browser.execute_script(
        "var t = document.querySelector('.info .title'); return t && t.textContent;")
    assert title and "ModelKeeper" in title, title
    paths = browser.execute_script(
        "return Array.from(document.querySelectorAll('.opblock-summary-path'))"
        ".map(e => e.getAttribute('data-path'));")
    assert "/v2/models/{model}/infer" in paths, paths
    # nothing came from outside the server
    outside = browser.execute_script(
        "return performance.getEntriesByType('resource').map(e => e.name)"
        ".filter(n => !n.startsWith(location.origin));")
    assert outside == [], outside
    assert console_errors(browser) == []
