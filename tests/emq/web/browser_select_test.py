#!/usr/bin/env python3
"""Select and act in a real browser: headless Chromium against a real
valkey-server and a real `emq web` (no daemon: what the page did stays put
for the test to read in the server).

Three dead rows ticked and retried are pending, and one retried by someone
else meanwhile is counted as moved on; every row of a 500-row page selected
and retried in batches (the time printed beside `emq dead retry --match`
over 500 jobs, the bulk form, measured in the same run); the Retries tab
lists the delayed jobs that failed with their next retry; the page size and
the jump to a page; a search's results selected and cancelled; and the whole
of it by keyboard alone: every control of the page is reached by Tab, and a
job is selected and retried with Space and Enter. The helpers are
browser_test.py's. A screenshot of a selection is saved under --artifacts.

  browser_select_test.py --emq build/bin/emq --emqd build/bin/emqd --artifacts build/test-artifacts
"""
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import browser_test as bt  # noqa: E402  (the path above first)
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.common.action_chains import ActionChains  # noqa: E402
from selenium.webdriver.common.keys import Keys  # noqa: E402

HOUR_MS = 3_600_000

# The controls of the page a keyboard must reach: visible, enabled ones.
CONTROLS = """
return [...document.querySelectorAll('a[href], button, input, select, summary')]
  .filter((e) => !e.disabled && e.type !== 'hidden' && e.getClientRects().length > 0)
  .map((e) => e.id || e.dataset.select || e.getAttribute('href') || e.textContent);
"""
FOCUSED = """
const e = document.activeElement;
return e ? (e.id || e.dataset.select || e.getAttribute('href') || e.textContent) : null;
"""


def seed_many_dead(valkey, queue, n, stem):
    """n dead jobs in one pipeline, as a worker's last failure leaves them."""
    c = valkey.client()
    p = c.pipeline(transaction=False)
    for i in range(n):
        job = f"JOB_{stem}_{i:04d}"
        p.hset(f"emq:{{{queue}}}:job:{job}",
               mapping={"state": "dead", "attempts": "3", "payload": f"p{i}", "failures": "3", "error": "boom"})
        p.zadd(f"emq:{{{queue}}}:dead", {job: 1700000000000 + i})
    p.sadd("{emq}:queues", queue)
    p.execute()


def seed_retry(valkey, queue, job_id, error, due_ms):
    c = valkey.client()
    c.hset(f"emq:{{{queue}}}:job:{job_id}",
           mapping={"state": "delayed", "attempts": "1", "payload": "x", "failures": "1", "error": error})
    c.zadd(f"emq:{{{queue}}}:delayed", {job_id: due_ms})
    c.sadd("{emq}:queues", queue)


class Select(bt.Bare):
    def tick(self, job_id):
        self.driver.execute_script(
            "document.querySelector('tr[data-id=\"' + arguments[0] + '\"] input[data-select]').click()", job_id)

    def press(self, key):
        """A key as the keyboard sends it, to whatever has the focus."""
        ActionChains(self.driver).send_keys(key).perform()

    def notice(self, starts):
        return bt.wait(self.driver, lambda d: (lambda t: t if t and t.startswith(starts) else None)(
            d.execute_script(bt.TEXT, "#notice")), f"a notice starting {starts!r}")

    def test_three_rows_selected_and_retried(self):
        for i in range(5):
            bt.seed_dead(self.valkey, "picks", f"JOB_pick_{i}", f"p{i}", f"error {i}", 1700000000000 + i)
        self.open("/queues/picks?state=dead")
        bt.text(self.driver, 'tr[data-id="JOB_pick_4"]')
        for i in (1, 2, 3):
            self.tick(f"JOB_pick_{i}")
        self.assertEqual(bt.text(self.driver, "#selection-count"), "3 selected")
        os.makedirs(bt.ARGS.artifacts, exist_ok=True)
        self.driver.set_window_size(1400, 1000)  # down to the rows
        try:
            self.driver.save_screenshot(os.path.join(bt.ARGS.artifacts, "web-select.png"))
        finally:
            self.driver.set_window_size(1400, 900)
        c = self.valkey.client()
        # Someone else retries one of them between the tick and the button.
        bt.emq(self.valkey, "dead", "retry", "picks", "JOB_pick_3")
        bt.click(self.driver, "#selection", "Retry")
        alert = bt.wait(self.driver, lambda d: d.switch_to.alert, "a confirmation")
        self.assertEqual(alert.text, "Retry 3 selected dead jobs of picks?")
        alert.accept()
        result = self.notice("Retried")
        self.assertRegex(result, r"^Retried 2 of 3 in [0-9.]+ s; 1 had moved on \(not dead any more\) and was left alone\.$")
        for i in (1, 2, 3):
            self.assertEqual(c.hget(f"emq:{{picks}}:job:JOB_pick_{i}", "state"), "pending")
        for i in (0, 4):
            self.assertEqual(c.hget(f"emq:{{picks}}:job:JOB_pick_{i}", "state"), "dead", "not selected: left dead")
        bt.wait(self.driver, lambda d: d.execute_script(
            "return document.querySelectorAll('#jobs tbody tr').length") == 2, "the two left in the list")
        self.assertEqual(bt.text(self.driver, "#selection-count"), "Select jobs to act on them")

    def test_a_whole_page_of_500_retried_in_batches(self):
        seed_many_dead(self.valkey, "big", 500, "big")
        self.open("/queues/big?state=dead&size=500")
        bt.wait(self.driver, lambda d: d.execute_script(
            "return document.querySelectorAll('#jobs tbody tr').length") == 500, "500 rows on the page")
        self.driver.execute_script("document.getElementById('select-all').click()")
        self.assertEqual(bt.text(self.driver, "#selection-count"), "500 selected")
        bt.click(self.driver, "#selection", "Retry")
        started = time.monotonic()
        bt.wait(self.driver, lambda d: d.switch_to.alert, "a confirmation").accept()
        result = self.notice("Retried")
        page_s = time.monotonic() - started
        self.assertRegex(result, r"^Retried 500 of 500 in [0-9.]+ s\.$")
        c = self.valkey.client()
        self.assertEqual(c.zcard("emq:{big}:dead"), 0)
        self.assertEqual(c.zcard("emq:{big}:pending"), 500)
        # The peer, in the same run: the bulk form over the same 500 jobs.
        seed_many_dead(self.valkey, "big2", 500, "big2")
        started = time.monotonic()
        bt.emq(self.valkey, "dead", "retry", "big2", "--match", "boom", "--yes")
        cli_s = time.monotonic() - started
        self.assertEqual(c.zcard("emq:{big2}:pending"), 500)
        print(f"\nselection of 500 retried from the page: {page_s:.2f} s (page says: {result}); "
              f"emq dead retry --match over 500: {cli_s:.2f} s; ratio {page_s / cli_s:.1f}", file=sys.stderr)

    def test_the_retries_tab_lists_failed_delayed_jobs_with_their_next_retry(self):
        c = self.valkey.client()
        now = bt.server_ms(c)
        seed_retry(self.valkey, "retryq", "JOB_retry_1", "gateway timeout", now + HOUR_MS)
        c.hset("emq:{retryq}:job:JOB_sched", mapping={"state": "delayed", "attempts": "0", "payload": "later"})
        c.zadd("emq:{retryq}:delayed", {"JOB_sched": now + 2 * HOUR_MS})
        self.open("/queues/retryq?state=retries")
        row = bt.cells(self.driver, 'tr[data-id="JOB_retry_1"]')
        self.assertEqual(row[1], "JOB_retry_1", row)
        self.assertIn("gateway timeout", row[5])
        self.assertEqual(self.driver.execute_script(
            "return document.querySelector('#jobs thead th:nth-child(3)').textContent"), "Next retry at")
        due = self.driver.execute_script(
            "return document.querySelector('tr[data-id=\"JOB_retry_1\"] time').getAttribute('datetime')")
        self.assertEqual(due, time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime((now + HOUR_MS) // 1000)) +
                         ".%03dZ" % ((now + HOUR_MS) % 1000))
        self.assertEqual(self.driver.find_elements(By.CSS_SELECTOR, 'tr[data-id="JOB_sched"]'), [],
                         "a scheduled job is no retry")
        self.assertIn("retries (1)", bt.text(self.driver, '.tabs a[data-state="retries"]'))
        # Run now from the Retries tab.
        self.tick("JOB_retry_1")
        bt.click(self.driver, "#selection", "Run now")
        bt.wait(self.driver, lambda d: d.switch_to.alert, "a confirmation").accept()
        self.notice("Running now 1 of 1")
        self.assertEqual(c.hget("emq:{retryq}:job:JOB_retry_1", "state"), "pending")
        self.open("/queues/retryq?state=delayed")
        self.assertIn("JOB_sched", bt.text(self.driver, 'tr[data-id="JOB_sched"]'))

    def test_page_size_and_jump_to_a_page(self):
        c = self.valkey.client()
        p = c.pipeline(transaction=False)
        for i in range(230):
            job = f"JOB_pg_{i:04d}"
            p.hset(f"emq:{{pages}}:job:{job}", mapping={"state": "pending", "attempts": "0", "payload": "x"})
            p.zadd("emq:{pages}:pending", {job: 0})
        p.sadd("{emq}:queues", "pages")
        p.execute()
        self.open("/queues/pages")
        self.assertEqual(bt.text(self.driver, "#page-where"), "1–50 of 230 · page 1 of 5")
        self.driver.execute_script(
            "const s = document.getElementById('page-size'); s.value = '100'; s.dispatchEvent(new Event('change'));")
        bt.wait(self.driver, lambda d: d.execute_script(bt.TEXT, "#page-where") == "1–100 of 230 · page 1 of 3",
                "100 a page")
        self.open("/queues/pages")
        self.assertEqual(bt.text(self.driver, "#page-where"), "1–100 of 230 · page 1 of 3", "the size sticks")
        box = self.driver.find_element(By.ID, "page-jump")
        box.clear()
        box.send_keys("3", Keys.ENTER)
        bt.wait(self.driver, lambda d: d.execute_script(bt.TEXT, "#page-where") == "201–230 of 230 · page 3 of 3",
                "jumped to page 3")
        self.driver.execute_script("localStorage.removeItem('emq-page-size')")

    def test_search_results_selected_and_cancelled(self):
        c = self.valkey.client()
        for i in range(4):
            job = f"JOB_srch_{i}"
            c.hset(f"emq:{{srch}}:job:{job}", mapping={"state": "pending", "attempts": "0",
                                                       "payload": "invoice" if i < 3 else "receipt"})
            c.zadd("emq:{srch}:pending", {job: 0})
        c.sadd("{emq}:queues", "srch")
        self.open("/search?q=invoice&queue=srch&state=pending&in=payload")
        bt.text(self.driver, 'tr[data-id="JOB_srch_0"]')
        self.tick("JOB_srch_0")
        self.tick("JOB_srch_2")
        bt.click(self.driver, "#selection", "Cancel")
        alert = bt.wait(self.driver, lambda d: d.switch_to.alert, "a confirmation")
        self.assertEqual(alert.text, "Cancel 2 selected pending jobs of srch?")
        alert.accept()
        self.notice("Cancelled 2 of 2")
        self.assertEqual(sorted(c.zrange("emq:{srch}:pending", 0, -1)), ["JOB_srch_1", "JOB_srch_3"])

    def test_every_control_is_reached_and_a_retry_done_by_keyboard_alone(self):
        for i in range(3):
            bt.seed_dead(self.valkey, "keys", f"JOB_key_{i}", "x", "e", 1700000000000 + i)
        self.open("/queues/keys?state=dead")
        bt.text(self.driver, 'tr[data-id="JOB_key_2"]')
        # From the top of the page, as a keyboard user starts.
        self.driver.execute_script("if (document.activeElement) document.activeElement.blur();")
        want = set(self.driver.execute_script(CONTROLS))
        reached = []
        for _ in range(len(want) * 2 + 20):
            self.press(Keys.TAB)
            reached.append(self.driver.execute_script(FOCUSED))
        missing = want - set(reached)
        self.assertEqual(missing, set(), "controls Tab never reached")
        # Select JOB_key_1 with Space, then Tab on to Retry and press Enter.
        self.driver.execute_script("document.querySelector('input[data-select=\"JOB_key_1\"]').focus()")
        self.press(Keys.SPACE)
        self.assertEqual(bt.text(self.driver, "#selection-count"), "1 selected")
        for _ in range(len(reached)):
            if self.driver.execute_script("return document.activeElement.textContent") == "Retry" and \
                    self.driver.execute_script("return !!document.activeElement.closest('#selection')"):
                break
            ActionChains(self.driver).key_down(Keys.SHIFT).send_keys(Keys.TAB).key_up(Keys.SHIFT).perform()
        self.assertTrue(self.driver.execute_script("return !!document.activeElement.closest('#selection')"),
                        "Shift+Tab back to the selection's Retry")
        self.press(Keys.ENTER)
        alert = bt.wait(self.driver, lambda d: d.switch_to.alert, "a confirmation")
        self.assertEqual(alert.text, "Retry 1 selected dead job of keys?")
        alert.accept()
        self.notice("Retried 1 of 1")
        self.assertEqual(self.valkey.client().hget("emq:{keys}:job:JOB_key_1", "state"), "pending")

    def test_read_only_offers_no_selection(self):
        bt.seed_dead(self.valkey, "ro", "JOB_ro_0", "x", "e", 1700000000000)
        ro = bt.EmqWeb(self.valkey, "--read-only")
        try:
            self.driver.get(ro.base + "/queues/ro?state=dead")
            bt.text(self.driver, 'tr[data-id="JOB_ro_0"]')
            self.assertEqual(self.driver.find_elements(By.CSS_SELECTOR, "input[data-select], #select-all, #selection"), [])
        finally:
            ro.close()


if __name__ == "__main__":
    sys.exit(bt.main())
