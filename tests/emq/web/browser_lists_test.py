#!/usr/bin/env python3
"""emq web's lists and live overview in a real browser: headless Chromium
against a real valkey-server, a real `emq web` and a real emqd.

The overview of queues that keep events follows them on one server-sent
stream (data-live set) and stops polling: a hook on the page's fetch
counts its reads of /api/queues, which grow only with the jobs completed.
A queue's Waiting tab lists a parent waiting for its child; its Completed
tab lists the jobs emqd completed, read from the events stream. The
helpers are browser_test.py's. Screenshots of the Completed tab and of a
parent's tree are saved under --artifacts.

  browser_lists_test.py --emq build/bin/emq --emqd build/bin/emqd --artifacts build/test-artifacts
"""
import json
import os
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import browser_test as bt  # noqa: E402  (the path above first)
from selenium.webdriver.common.by import By  # noqa: E402

# "live" keeps events and runs jobs that end at once; "kids" is served by
# no daemon, so a parent whose child is there waits.
CONFIG = """
valkey: {{ url: "{url}" }}
metrics: {{ listen: "" }}
log: {{ level: warn }}
shutdown: {{ drain_timeout_s: 1 }}
defaults: {{ events: 1000 }}
queues:
  - name: live
    concurrency: 2
    keep_completed_s: 600
    handler: {{ type: exec, command: ["/bin/true"], timeout_s: 30 }}
"""

# Counts the page's reads of /api/queues from the moment it is installed.
COUNT_READS = """
if (!window.__reads) {
  window.__reads = 0;
  const real = window.fetch;
  window.fetch = function (input, init) {
    if (String(input).split('?')[0] === '/api/queues') window.__reads++;
    return real.call(this, input, init);
  };
}
return window.__reads;
"""
PROCESSED = "const t = document.querySelector('#totals [data-total=\"processed\"] b'); return t ? t.textContent : null;"
CELL = "const c = document.querySelector('tr[data-queue=\"' + arguments[0] + '\"] td:nth-child(3)'); return c ? c.textContent : null;"


class Lists(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        bt.rig(cls, CONFIG)
        c = cls.valkey.client()
        bt.wait_server(lambda: c.hget("emq:{live}:meta", "events") == "1000", "emqd wrote live's events length")
        tree = ('{"queue":"parents","payload":"sheet","children":[{"queue":"kids","payload":"a.png",'
                '"children":[{"queue":"kids","payload":"a-small.png"},{"queue":"kids","payload":"a-tiny.png"}]}]}')
        cls.flow = json.loads(bt.emq(cls.valkey, "flow", "enqueue", "--json", "-", stdin=tree))
        # The flow's queues keep events too, so every queue of the overview is followed.
        for q in ("parents", "kids"):
            c.hset(f"emq:{{{q}}}:meta", "events", "1000")

    tearDownClass = classmethod(bt.Page.tearDownClass.__func__)
    open = bt.Page.open

    def completed_counter(self):
        return int(self.valkey.client().hget("emq:{live}:stats", "completed") or 0)

    def test_the_overview_follows_the_stream_and_does_not_poll(self):
        self.open("/")
        bt.wait(self.driver, lambda d: d.execute_script("return document.body.getAttribute('data-live')") == "true",
                "the overview follows its queues live")
        bt.wait(self.driver, lambda d: d.execute_script(CELL, "live") == "0", "live has no pending job")
        self.driver.execute_script(COUNT_READS)
        # With nothing happening, no read for longer than the 5 s poll would take.
        time.sleep(7)
        self.assertEqual(self.driver.execute_script(COUNT_READS), 0, "the overview polled while following live")
        before = self.completed_counter()
        for i in range(3):
            bt.enqueue(self.valkey, "live", f"job {i}")
        bt.wait_server(lambda: self.completed_counter() >= before + 3, "emqd completed the three jobs")
        bt.wait(self.driver, lambda d: d.execute_script(COUNT_READS) > 0, "the overview redrawn from the stream")
        want = str(self.completed_counter())
        bt.wait(self.driver, lambda d: d.execute_script(PROCESSED) == want,
                f"the strip's processed reads {want} (it reads {self.driver.execute_script(PROCESSED)})")
        self.assertEqual(self.driver.execute_script("return document.body.getAttribute('data-live')"), "true")

    def test_the_waiting_tab_lists_the_parent(self):
        parent = self.flow["id"]
        self.open("/queues/parents?state=waiting")
        row = bt.cells(self.driver, f'#jobs tr[data-id="{parent}"]')
        self.assertEqual(row[0], parent, row)
        self.assertIn("waiting (1)", bt.text(self.driver, '.tabs a[data-state="waiting"]'))
        self.open(f"/queues/parents/jobs/{parent}")
        child = self.flow["children"][0]
        self.assertIn("waiting", bt.text(self.driver, f'#tree li[data-node="kids:{child["id"]}"]'))
        grandchild = bt.text(self.driver, f'#tree li li[data-node="kids:{child["children"][0]["id"]}"]')
        self.assertIn("pending", grandchild, "the tree goes below one level")
        os.makedirs(bt.ARGS.artifacts, exist_ok=True)
        self.driver.save_screenshot(os.path.join(bt.ARGS.artifacts, "web-tree.png"))

    def test_the_completed_tab_lists_the_jobs_emqd_completed(self):
        ids = [bt.enqueue(self.valkey, "live", f"done {i}") for i in range(2)]
        c = self.valkey.client()
        bt.wait_server(lambda: all(c.hget(f"emq:{{live}}:job:{i}", "state") == "completed" for i in ids),
                       "emqd completed both")
        self.open("/queues/live?state=completed")
        for i in ids:
            row = bt.cells(self.driver, f'#completed tr[data-id="{i}"]')
            self.assertEqual(row[1], i, row)
            title = self.driver.execute_script(
                "return document.querySelector(arguments[0]).title", f'#completed tr[data-id="{i}"] time')
            self.assertIn(" UTC · ", title, "UTC on hover")
        link = self.driver.find_element(By.CSS_SELECTOR, f'#completed tr[data-id="{ids[0]}"] a')
        self.assertTrue(link.get_attribute("href").endswith(f"/queues/live/jobs/{ids[0]}"))
        os.makedirs(bt.ARGS.artifacts, exist_ok=True)
        self.driver.save_screenshot(os.path.join(bt.ARGS.artifacts, "web-completed.png"))
        self.open("/queues/kids?state=completed")
        bt.wait(self.driver, lambda d: d.find_elements(By.CSS_SELECTOR, "#completed"), "kids' empty list")


if __name__ == "__main__":
    sys.exit(bt.main())
