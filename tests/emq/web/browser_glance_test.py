#!/usr/bin/env python3
"""The first glance, a job's story, night shift and small screens, in a
real browser: headless Chromium against a real valkey-server, a real `emq
web` and a real emqd whose handler fails every run (each with its own
error) on a queue that keeps events.

A dead job retried twice from the page shows three attempts, each with its
error; the overview's per-queue chart and completed/min on a fresh tab are
the server's history, minute by minute; the realtime chart counts what the
live stream says finishes; dark mode follows the system until pressed and
sticks after; at 390 px no element of the overview, a queue page or a
job page lies outside the viewport (checked by script: only tables scroll,
inside their boxes); Pause updates holds the live redraw; ?live=0 opens no
stream. Screenshots of the story, of the overview's charts, of dark mode
and of 390 px are saved under --artifacts. The helpers are browser_test.py's.

  browser_glance_test.py --emq build/bin/emq --emqd build/bin/emqd --artifacts build/test-artifacts
"""
import json
import os
import sys
import time
import unittest
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import browser_test as bt  # noqa: E402  (the path above first)
from selenium.webdriver.common.by import By  # noqa: E402

MINUTE_MS = 60_000

# "failing" dies at its first failure (exit 65 is permanent), with an
# error naming the moment it ran; "done" completes everything.
CONFIG = """
valkey: {{ url: "{url}" }}
metrics: {{ listen: "" }}
log: {{ level: warn }}
shutdown: {{ drain_timeout_s: 1 }}
defaults: {{ events: 1000 }}
queues:
  - name: failing
    handler: {{ type: exec, command: ["sh", "-c", "echo run $(date +%s%N) >&2; exit 65"], timeout_s: 30 }}
  - name: done
    concurrency: 2
    handler: {{ type: exec, command: ["/bin/true"], timeout_s: 30 }}
"""

# Every element's box against the viewport: those outside it, but for what
# lies inside a scrolling box that is itself inside (a table scrolls there).
OUTSIDE = """
const w = document.documentElement.clientWidth;
const out = [];
if (document.documentElement.scrollWidth > w) out.push('the page scrolls sideways: ' + document.documentElement.scrollWidth + ' > ' + w);
for (const e of document.querySelectorAll('body *')) {
  if (e.closest('.scroll') && e.closest('.scroll') !== e) continue;
  if (e.closest('svg') && e.tagName.toLowerCase() !== 'svg') continue;
  const r = e.getBoundingClientRect();
  if (!r.width && !r.height) continue;
  if (r.left < -0.5 || r.right > w + 0.5) out.push(e.tagName + (e.id ? '#' + e.id : '') + '.' + e.className + ' [' + Math.round(r.left) + ', ' + Math.round(r.right) + ']');
}
return out;
"""
BACKGROUND = "return getComputedStyle(document.body).backgroundColor;"


class Glance(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        bt.rig(cls, CONFIG)
        c = cls.valkey.client()
        bt.wait_server(lambda: c.hget("emq:{failing}:meta", "events") == "1000", "emqd wrote failing's events length")

    tearDownClass = classmethod(bt.Page.tearDownClass.__func__)
    open = bt.Page.open

    def api(self, path):
        with urllib.request.urlopen(self.web.base + path) as r:
            return json.load(r)

    def screenshot(self, name):
        os.makedirs(bt.ARGS.artifacts, exist_ok=True)
        self.driver.save_screenshot(os.path.join(bt.ARGS.artifacts, name))

    def test_a_dead_job_retried_twice_shows_three_attempts_with_their_errors(self):
        c = self.valkey.client()
        job = bt.enqueue(self.valkey, "failing", '{"invoice": 12345678901234567890, "lines": [1, 2], "to": "a@b"}')
        row = f"emq:{{failing}}:job:{job}"
        errors = []
        for run in range(1, 4):
            # failures counts every run that failed; a retry keeps it.
            bt.wait_server(lambda: c.hget(row, "failures") == str(run) and c.hget(row, "state") == "dead",
                           f"run {run} died")
            errors.append(c.hget(row, "error"))
            if run < 3:
                self.open(f"/queues/failing/jobs/{job}")
                bt.text(self.driver, f'#runs tr[data-run="{run}"]')
                bt.click(self.driver, "#view .actions", "Retry")
        self.assertEqual(len(set(errors)), 3, errors)
        self.open(f"/queues/failing/jobs/{job}")
        bt.wait(self.driver, lambda d: d.execute_script(
            "return document.querySelectorAll('#runs tbody tr').length") == 3, "three attempts listed")
        for i, error in enumerate(errors):
            cells = bt.cells(self.driver, f'#runs tr[data-run="{i + 1}"]')
            self.assertEqual(cells[5], "failed, died", cells)
            self.assertEqual(cells[6], error[:256], cells)
            self.assertTrue(cells[2] and cells[3] and cells[4] not in ("", "–"), cells)
        self.assertEqual(self.driver.find_elements(By.ID, "runs-cut"), [], "the stream holds the whole story")
        for name in ("enqueued", "started", "finished"):
            self.assertRegex(bt.text(self.driver, f'#job-fields dd[data-time="{name}"]'), r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d")
        self.assertNotEqual(bt.text(self.driver, '#job-fields dd[data-time="ran for"]'), "–")
        # The payload indented, its 64-bit number as the producer wrote it.
        payload = bt.text(self.driver, 'pre[data-field="payload"]')
        self.assertEqual(payload, '{\n  "invoice": 12345678901234567890,\n  "lines": [\n    1,\n    2\n  ],\n  "to": "a@b"\n}')
        self.driver.set_window_size(1400, 1100)
        try:
            self.screenshot("web-story.png")
        finally:
            self.driver.set_window_size(1400, 900)

    def test_the_overview_chart_is_the_servers_history_on_a_fresh_tab(self):
        c = self.valkey.client()
        c.hset("emq:{spark}:stats", mapping={"claimed": 195, "completed": 195, "dead": 3})
        c.sadd("{emq}:queues", "spark")
        # Seeded and read in one server minute, in a fresh tab each time
        # (nothing kept from an earlier one): a minute that turns between
        # the seeding and the page's read moves the chart's window against
        # the samples, so then the samples are written again for the new
        # minute and read again.
        deadline = time.monotonic() + bt.WAIT_S
        while True:
            minute = bt.server_ms(c) // MINUTE_MS
            # Samples (completed, dead) a minute apart, two minutes missing:
            # completed 40, 0, gap, gap, 7, gap, 8, 10 and what this minute did.
            c.delete("emq:{spark}:history:minute")
            for back, done, dead in ((9, 100, 0), (8, 140, 0), (7, 140, 0), (5, 165, 1), (4, 172, 1), (2, 172, 1),
                                     (1, 180, 2), (0, 190, 3)):
                c.hset("emq:{spark}:history:minute", str(minute - back), f"{done} {done} 0 {dead}")
            self.driver.switch_to.new_window("tab")
            try:
                self.open("/")
                bars = bt.wait(self.driver, lambda d: d.execute_script(
                    "return [...document.querySelectorAll('tr[data-queue=\"spark\"] svg.chart g[data-t]')]"
                    ".map((g) => [Number(g.dataset.t), g.dataset.completed, g.dataset.dead])"), "the chart's minutes")
                cells = bt.cells(self.driver, 'tr[data-queue="spark"]')
            finally:
                self.driver.close()
                self.driver.switch_to.window(self.driver.window_handles[0])
            history = self.api("/api/history?queue=spark&range=1h")
            if bt.server_ms(c) // MINUTE_MS == minute or time.monotonic() > deadline:
                break
        self.assertEqual(len(bars), 10, bars)
        first, last = bars[0][0], bars[-1][0]
        want = {p["t"]: (p["completed"], p["dead"]) for p in history["points"] if first <= p["t"] <= last}
        drawn = {t: (int(done), int(dead)) for t, done, dead in bars if done != ""}
        self.assertEqual(drawn, want)
        self.assertGreaterEqual(len(drawn), 5, drawn)
        # Completed/min and died/min: the last whole minute, as the history has it.
        whole = {p["t"]: p for p in history["points"]}.get(last - MINUTE_MS)
        self.assertEqual(cells[7], str(whole["completed"]) if whole else "–", cells)
        self.assertEqual(cells[8], str(whole["dead"]) if whole else "–", cells)
        self.assertEqual(cells[6], "0", "waiting")

    def test_the_realtime_chart_counts_what_finishes(self):
        self.open("/")
        bt.wait(self.driver, lambda d: d.execute_script("return document.body.getAttribute('data-live')") == "true",
                "the overview follows its queues live")
        for i in range(4):
            bt.enqueue(self.valkey, "done", f"job {i}")
        bt.wait(self.driver, lambda d: int(d.execute_script(
            "const s = document.getElementById('realtime-sums'); return s && s.dataset.processed || 0")) >= 4,
            "four completions counted from the stream")
        self.driver.set_window_size(1400, 1500)  # the queues, the realtime chart, the history, the server
        try:
            self.screenshot("web-glance.png")
        finally:
            self.driver.set_window_size(1400, 900)
        self.assertIn("Valkey", bt.text(self.driver, "#server"))
        self.assertRegex(bt.text(self.driver, '#server dd[data-field="memory"]'), r"used, peak")
        self.assertNotEqual(bt.text(self.driver, '#server dd[data-field="maxmemory-policy"]'), "?")

    def test_dark_mode_follows_the_system_until_pressed_and_sticks(self):
        self.driver.execute_cdp_cmd("Emulation.setEmulatedMedia",
                                    {"features": [{"name": "prefers-color-scheme", "value": "dark"}]})
        try:
            self.open("/")
            self.driver.execute_script("localStorage.removeItem('emq-theme')")
            self.open("/")
            bt.text(self.driver, 'tr[data-queue="failing"]')
            self.assertEqual(self.driver.execute_script(BACKGROUND), "rgb(20, 23, 29)", "the system's dark")
            self.driver.execute_cdp_cmd("Emulation.setEmulatedMedia",
                                        {"features": [{"name": "prefers-color-scheme", "value": "light"}]})
            self.assertEqual(self.driver.execute_script(BACKGROUND), "rgb(246, 247, 249)", "the system's light")
            bt.click(self.driver, "#prefs", "Dark mode")
            bt.wait(self.driver, lambda d: d.execute_script(BACKGROUND) == "rgb(20, 23, 29)", "dark when pressed")
            self.open("/queues/failing?state=dead")
            bt.text(self.driver, "#jobs")
            self.assertEqual(self.driver.execute_script(BACKGROUND), "rgb(20, 23, 29)", "the choice sticks")
            self.assertEqual(self.driver.execute_script(
                "return document.getElementById('theme-toggle').getAttribute('aria-pressed')"), "true")
            self.open("/")
            bt.wait(self.driver, lambda d: d.find_elements(By.CSS_SELECTOR, "#history svg, #history-empty"), "the history")
            self.screenshot("web-dark.png")
        finally:
            self.driver.execute_script("localStorage.removeItem('emq-theme')")
            self.driver.execute_cdp_cmd("Emulation.setEmulatedMedia", {"features": []})

    def test_at_390_px_nothing_lies_outside_the_viewport(self):
        c = self.valkey.client()
        job = bt.enqueue(self.valkey, "failing", "a payload with a rather long line " * 8)
        bt.wait_server(lambda: c.hget(f"emq:{{failing}}:job:{job}", "state") == "dead", "it died")
        c.hset("emq:{failing}:meta", mapping={"max_active": "20", "rate_max": "100", "rate_window_ms": "1000"})
        self.driver.set_window_size(390, 844)
        try:
            for path, ready in (("/", 'tr[data-queue="failing"]'), ("/queues/failing?state=dead", f'tr[data-id="{job}"]'),
                                (f"/queues/failing/jobs/{job}", "#runs"), ("/daemons", "#daemons")):
                self.open(path)
                bt.text(self.driver, ready)
                self.assertEqual(self.driver.execute_script(OUTSIDE), [], f"outside the viewport at 390 px on {path}")
                if path == "/":
                    self.screenshot("web-phone.png")
            # The Pause form, opened at 390 px, fits too.
            self.open("/")
            bt.click(self.driver, 'tr[data-queue="failing"]', "Pause…")
            bt.text(self.driver, "#pause-form")
            self.assertEqual(self.driver.execute_script(OUTSIDE), [], "the Pause form at 390 px")
        finally:
            self.driver.set_window_size(1400, 900)

    def test_pause_updates_holds_the_live_redraw(self):
        self.open("/queues/done?state=completed")
        bt.wait(self.driver, lambda d: d.execute_script("return document.body.getAttribute('data-live')") == "true",
                "the queue page follows live")
        first = bt.enqueue(self.valkey, "done", "before the pause")
        bt.text(self.driver, f'#completed tr[data-id="{first}"]')
        bt.click(self.driver, "#prefs", "Pause updates")
        bt.wait(self.driver, lambda d: d.execute_script(
            "return document.getElementById('pause-live').getAttribute('aria-pressed')") == "true", "paused")
        held = bt.enqueue(self.valkey, "done", "during the pause")
        bt.wait(self.driver, lambda d: "held" in (d.execute_script(bt.TEXT, "#updated") or ""), "the header counts what it holds")
        self.assertEqual(self.driver.find_elements(By.CSS_SELECTOR, f'#completed tr[data-id="{held}"]'), [],
                         "no redraw while paused")
        bt.click(self.driver, "#prefs", "Resume updates")
        bt.text(self.driver, f'#completed tr[data-id="{held}"]')

    def test_live_0_draws_once_and_opens_no_stream(self):
        # Counts the EventSources the page opens, from before its scripts run.
        hook = self.driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": """
            window.__streams = 0;
            const Real = window.EventSource;
            window.EventSource = function (url, options) { window.__streams++; return new Real(url, options); };"""})
        try:
            self.open("/")
            bt.wait(self.driver, lambda d: d.execute_script("return window.__streams") > 0, "the live page opens a stream")
            self.open("/?live=0")
            bt.text(self.driver, 'tr[data-queue="failing"]')
            bt.text(self.driver, "#static-note")
            bt.text(self.driver, "#server dl")
            self.assertEqual(self.driver.execute_script("return window.__streams"), 0)
            self.assertIsNone(self.driver.execute_script("return document.body.getAttribute('data-live')"))
        finally:
            self.driver.execute_cdp_cmd("Page.removeScriptToEvaluateOnNewDocument", {"identifier": hook["identifier"]})

if __name__ == "__main__":
    sys.exit(bt.main())
