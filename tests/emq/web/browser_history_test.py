#!/usr/bin/env python3
"""emq web's totals strip and history chart in a real browser: headless
Chromium against a real valkey-server, a real `emq web` and a real emqd
(whose running jobs are the strip's "busy", and whose jobs claimed ahead
for a slot are not).

History is seeded on the server as emqd writes it (one sample of the four
counters per minute and per day, docs/web.md, "History"); the chart on the
overview and on a queue's page reads it, per range, and the strip sums
every queue. The helpers are browser_test.py's. A screenshot of the chart
is saved under --artifacts.

  browser_history_test.py --emq build/bin/emq --emqd build/bin/emqd --artifacts build/test-artifacts
"""
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import browser_test as bt  # noqa: E402  (the path above first)
from selenium.webdriver.common.by import By  # noqa: E402

MINUTE_MS = 60_000
DAY_MS = 86_400_000

# Two slots of jobs that sleep: two jobs run, "busy 2", as long as the test;
# two more are claimed ahead (prefetch) and wait in emqd for a slot.
BUSY_CONFIG = """
valkey: {{ url: "{url}" }}
metrics: {{ listen: "" }}
log: {{ level: warn }}
shutdown: {{ drain_timeout_s: 1 }}
queues:
  - name: sleepers
    concurrency: 2
    prefetch: 2
    handler: {{ type: exec, command: ["sleep", "60"], timeout_s: 120 }}
"""

# Sums of the chart's legend: "completed", "failed", "dead", "claimed".
SUMS = """
const s = document.querySelector('#history [data-sum="' + arguments[0] + '"]');
return s ? s.textContent : null;
"""
# The range the chart section was last drawn at; null before its first draw.
DRAWN = "const h = document.querySelector('#history'); return h ? h.getAttribute('data-range') : null;"
TOTAL = "const t = document.querySelector('#totals [data-total=\"' + arguments[0] + '\"] b'); return t ? t.textContent : null;"


def server_ms(client):
    secs, micros = client.time()
    return secs * 1000 + micros // 1000


class History(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        bt.rig(cls, BUSY_CONFIG)
        c = cls.valkey.client()
        now = server_ms(c)
        minute, day = now // MINUTE_MS, now // DAY_MS
        # Completed per minute 100, 50, 0, 50; failed 2 and dead 1 in the first.
        for back, completed, retried, dead in ((6, 1000, 5, 2), (5, 1100, 7, 3), (4, 1150, 7, 3), (3, 1150, 7, 3),
                                               (2, 1200, 7, 3)):
            c.hset("emq:{hist}:history:minute", str(minute - back), f"{completed + 10} {completed} {retried} {dead}")
        # Completed per day 300, 200; today has no sample: a gap.
        for back, completed in ((3, 500), (2, 800), (1, 1000)):
            c.hset("emq:{hist}:history:day", str(day - back), f"{completed} {completed} 0 0")
        c.hset("emq:{hist}:stats", mapping={"completed": 1234, "retried": 7, "dead": 3, "claimed": 1244})
        c.sadd("{emq}:queues", "hist")
        for i in range(3):
            bt.enqueue(cls.valkey, "hist", f"waiting {i}")
        c.zadd("emq:{hist}:delayed", {"JOB_later": now + 3_600_000})
        c.hset("emq:{hist}:job:JOB_later", mapping={"state": "delayed", "attempts": "0", "payload": "later"})
        for i in range(2):
            bt.seed_dead(cls.valkey, "hist", f"JOB_dead_{i}", "p", "boom", 1700000000000 + i)
        for i in range(4):
            bt.enqueue(cls.valkey, "sleepers", f"nap {i}")

    # The same rig as browser_test.Page's: its teardown and its open().
    tearDownClass = classmethod(bt.Page.tearDownClass.__func__)
    open = bt.Page.open

    def sum_is(self, name, want):
        bt.wait(self.driver, lambda d: d.execute_script(SUMS, name) == want,
                f"the chart's {name} sum reads {want} (it reads {self.driver.execute_script(SUMS, name)})")

    def choose(self, range_name):
        bt.click(self.driver, "#history .ranges", range_name)
        bt.wait(self.driver, lambda d: d.execute_script(
            "return document.querySelector('#history').getAttribute('data-range')") == range_name,
            f"the chart redrawn for {range_name}")

    def test_the_strip_sums_every_queue_and_the_daemons_busy(self):
        self.open("/")
        want = {"processed": "1,234", "failed": "10", "busy": "2", "enqueued": "3", "delayed": "1", "dead": "2"}
        for name, value in want.items():
            bt.wait(self.driver, lambda d: d.execute_script(TOTAL, name) == value,
                    f"the strip's {name} reads {value} (it reads {self.driver.execute_script(TOTAL, name)})")
        self.open("/queues/hist")
        bt.wait(self.driver, lambda d: d.execute_script(TOTAL, "busy") == "2", "the strip on a queue's page too")
        note = "return document.querySelector('#totals [data-total=\"busy\"]').title"
        bt.wait(self.driver, lambda d: "2 more claimed ahead wait for a slot" in d.execute_script(note),
                f"the busy note counts the jobs claimed ahead (it says {self.driver.execute_script(note)!r})")

    def test_the_daemons_page_shows_the_jobs_claimed_ahead_apart_from_busy(self):
        self.open("/daemons")
        cell = "const c = document.querySelector('#daemons td.busy'); return c ? c.textContent : null;"
        bt.wait(self.driver, lambda d: d.execute_script(cell) == "2/2+2 waiting for a slot",
                f"busy/slots and the jobs claimed ahead (it reads {self.driver.execute_script(cell)!r})")
        waiting = "return [...document.querySelectorAll('#daemons [data-job]')].filter((j) => " \
                  "j.textContent.includes('waits for a slot')).length"
        bt.wait(self.driver, lambda d: d.execute_script(waiting) == 2,
                f"two jobs wait for a slot (it shows {self.driver.execute_script(waiting)})")

    def test_the_overview_chart_reads_the_history_on_the_server(self):
        self.open("/")
        self.sum_is("completed", "200")
        self.sum_is("failed", "2")
        self.sum_is("dead", "1")
        bars = self.driver.execute_script(
            "return document.querySelectorAll('#history svg.history-chart g[data-t] rect.completed').length")
        self.assertEqual(bars, 3, "one bar per minute that completed jobs; the quiet minute has none")
        self.choose("30d")
        self.sum_is("completed", "500")
        self.choose("1h")
        self.sum_is("completed", "200")
        bt.wait(self.driver, lambda d: d.execute_script(TOTAL, "busy") == "2", "the strip's busy, for the picture")
        os.makedirs(bt.ARGS.artifacts, exist_ok=True)
        self.driver.save_screenshot(os.path.join(bt.ARGS.artifacts, "web-history.png"))

    def test_a_queue_page_charts_its_own_history(self):
        self.open("/queues/hist")
        self.sum_is("completed", "200")
        self.choose("90d")
        self.sum_is("completed", "500")
        self.open("/queues/sleepers")
        # Drawn for sleepers: its own section, at the default range (hist's
        # stays at 90d), showing no history or sums of 0; never hist's 500.
        # The default is a day, or the last hour when all of a queue's
        # history fits in it, as sleepers' (none) does.
        bt.wait(self.driver, lambda d: d.execute_script(DRAWN) == "1h", "sleepers' chart drawn at its default range")
        self.assertTrue(self.driver.find_elements(By.CSS_SELECTOR, "#history-empty")
                        or self.driver.execute_script(SUMS, "completed") == "0",
                        f"another queue's page shows history: completed {self.driver.execute_script(SUMS, 'completed')}")


def main():
    parser = bt.argparse.ArgumentParser()
    parser.add_argument("--emq", required=True)
    parser.add_argument("--emqd", required=True)
    parser.add_argument("--artifacts", required=True)
    bt.ARGS, rest = parser.parse_known_args()
    result = unittest.main(argv=[sys.argv[0], "-v", *rest], exit=False).result
    return 0 if result.wasSuccessful() and result.testsRun > 0 else 1


if __name__ == "__main__":
    sys.exit(main())
