#!/usr/bin/python3
"""A screenshot of a history page (harness history page) in headless Chromium:

    scripts/history_screenshot.py SITE/index.html OUT.png [--metric NAME] [--click REVISION]

With --metric, only that metric's charts are shown (the others hidden); with
--click, the median point of REVISION (a prefix of it) in the first chart shown is
clicked, so the shot holds that revision's runs plotted. Needs Debian's chromium,
chromium-driver and python3-selenium (scripts/lib/setup.sh installs them for tests).
"""
import argparse
import shutil
import sys
from pathlib import Path

try:
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.action_chains import ActionChains
except ImportError:
    sys.exit("history_screenshot.py: python3-selenium is not installed (apt-get install python3-selenium "
             "chromium chromium-driver)")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("page")
    ap.add_argument("out")
    ap.add_argument("--metric")
    ap.add_argument("--click")
    a = ap.parse_args()
    driver_path = shutil.which("chromedriver")
    if driver_path is None:
        sys.exit("history_screenshot.py: chromedriver is not installed (apt-get install chromium-driver)")
    options = webdriver.ChromeOptions()
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--window-size=1200,900"):
        options.add_argument(flag)
    browser = webdriver.Chrome(service=Service(driver_path), options=options)
    try:
        browser.get(Path(a.page).resolve().as_uri())
        shown = browser.execute_script("""
            const metric = arguments[0];
            const charts = [...document.querySelectorAll('canvas[id^="chart-"]')];
            const keep = charts.filter(c => !metric || c.parentElement.textContent.includes(metric));
            for (const c of charts) if (!keep.includes(c)) c.parentElement.style.display = 'none';
            return keep.map(c => c.id);""", a.metric)
        if not shown:
            sys.exit(f"history_screenshot.py: no chart of metric '{a.metric}' on the page")
        if a.click:
            index = browser.execute_script("""
                const c = Chart.getChart(arguments[0]);
                return c.data.labels.findIndex(l => String(l).startsWith(arguments[1]));""", shown[0], a.click)
            if index < 0:
                sys.exit(f"history_screenshot.py: no revision '{a.click}' in chart {shown[0]}")
            canvas = browser.find_element("id", shown[0])
            browser.execute_script("arguments[0].scrollIntoView({block: 'center'})", canvas)
            x, y, w, h = browser.execute_script("""
                const c = Chart.getChart(arguments[0]), p = c.getDatasetMeta(2).data[arguments[1]];
                const r = c.canvas.getBoundingClientRect();
                return [p.x, p.y, r.width, r.height];""", shown[0], index)
            ActionChains(browser).move_to_element_with_offset(canvas, round(x - w / 2), round(y - h / 2)).click().perform()
        height = browser.execute_script("return document.documentElement.scrollHeight")
        browser.set_window_size(1200, min(height + 40, 4000))
        browser.execute_script("window.scrollTo(0, 0)")
        browser.save_screenshot(a.out)
    finally:
        browser.quit()


if __name__ == "__main__":
    main()
