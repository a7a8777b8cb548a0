#!/usr/bin/python3
"""A screenshot of a page `harness page` (or `compare --page`) wrote, in headless Chromium:

    scripts/page_screenshot.py SITE/index.html OUT.png [--part memory|tables|flame|diff|comparison] [--zoom FROM,TO]
        [--click FRAME] [--width PX]

--part shoots that part of the page only (its element), else the whole page;
--zoom sets the memory charts' x range in seconds; --click clicks the first
frame of the flame graph whose name starts with FRAME first. Needs Debian's
chromium, chromium-driver and python3-selenium (scripts/lib/setup.sh installs them).
"""
import argparse
import shutil
import sys
from pathlib import Path

try:
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
except ImportError:
    sys.exit("page_screenshot.py: python3-selenium is not installed (apt-get install python3-selenium "
             "chromium chromium-driver)")

PARTS = {"memory": "#memory", "tables": "#tables", "comparison": "#comparison",
         "flame": "#flames > section:nth-of-type(1)", "diff": "#flames > section:nth-of-type(2)"}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("page")
    ap.add_argument("out")
    ap.add_argument("--part", choices=sorted(PARTS))
    ap.add_argument("--zoom")
    ap.add_argument("--click")
    ap.add_argument("--width", type=int, default=1300)
    a = ap.parse_args()
    driver_path = shutil.which("chromedriver")
    if driver_path is None:
        sys.exit("page_screenshot.py: chromedriver is not installed (apt-get install chromium-driver)")
    options = webdriver.ChromeOptions()
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", f"--window-size={a.width},1000"):
        options.add_argument(flag)
    browser = webdriver.Chrome(service=Service(driver_path), options=options)
    try:
        browser.get(Path(a.page).resolve().as_uri())
        if browser.execute_script("return document.body.dataset.rendered") is None:
            sys.exit("page_screenshot.py: the page's script did not run")
        if a.zoom:
            lo, hi = (float(v) for v in a.zoom.split(","))
            browser.execute_script("""document.querySelectorAll('canvas[id^="memory-"]').forEach(c =>
                Chart.getChart(c).zoomScale('x', {min: arguments[0], max: arguments[1]}, 'none'));""", lo, hi)
        if a.click:
            found = browser.execute_script("""
                const g = [...document.querySelectorAll('#flame g.frame')].find(g => g.getAttribute('name').startsWith(arguments[0]));
                if (!g) return false;
                g.dispatchEvent(new MouseEvent('click', {bubbles: true}));
                return true;""", a.click)
            if not found:
                sys.exit(f"page_screenshot.py: no frame '{a.click}' in the flame graph")
            browser.execute_script("return new Promise(r => setTimeout(r, 300))")
        height = browser.execute_script("return document.documentElement.scrollHeight")
        browser.set_window_size(a.width, min(height + 400, 12000))
        if a.part:
            shown = browser.find_elements("css selector", PARTS[a.part])
            if not shown:
                sys.exit(f"page_screenshot.py: the page has no {a.part}")
            shown[0].screenshot(a.out)
        else:
            browser.save_screenshot(a.out)
    finally:
        browser.quit()


if __name__ == "__main__":
    main()
