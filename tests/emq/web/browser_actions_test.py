#!/usr/bin/env python3
"""emq web's operator actions in a real browser: headless Chromium against
a real valkey-server and a real `emq web` (no daemon: a job run now stays
pending for the test to see).

Run now on a delayed job leaves it pending; Delete all dead asks with the
count, and the dead list is empty after; a dead job whose unique key
another live job holds shows its key, and its Retry (and Retry all dead)
leaves it dead, naming the holder; under --read-only none of the buttons
is drawn. A screenshot of a queue page with the buttons is saved
under --artifacts (docs/web-actions.png is a copy). The helpers are
browser_test.py's.

  browser_actions_test.py --emq build/bin/emq --emqd build/bin/emqd --artifacts build/test-artifacts
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import browser_test as bt  # noqa: E402  (the path above first)
from selenium.webdriver.common.by import By  # noqa: E402

HOUR_MS = 3_600_000
SCHEDULE = '{"every_ms":3600000,"timezone":"UTC","lane":0,"overlap":"allow","misfire_grace_ms":5000}'



def seed_delayed(valkey, queue, job_id, payload):
    c = valkey.client()
    c.hset(f"emq:{{{queue}}}:job:{job_id}", mapping={"state": "delayed", "attempts": "0", "payload": payload})
    c.zadd(f"emq:{{{queue}}}:delayed", {job_id: bt.server_ms(c) + HOUR_MS})
    c.sadd("{emq}:queues", queue)


class Actions(bt.Bare):
    def test_run_now_leaves_a_delayed_job_pending(self):
        seed_delayed(self.valkey, "later", "JOB_later_1", "tomorrow's report")
        self.open("/queues/later?state=delayed")
        due = bt.wait(self.driver, lambda d: d.execute_script(
            "const t = document.querySelector('tr[data-id=\"JOB_later_1\"] time'); return t && t.title;"), "the due time")
        self.assertRegex(due, r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC · ", "the due time in UTC on hover")
        bt.click(self.driver, 'tr[data-id="JOB_later_1"]', "Run now")
        c = self.valkey.client()
        bt.wait_server(lambda: c.hget("emq:{later}:job:JOB_later_1", "state") == "pending", "JOB_later_1 pending")
        bt.wait(self.driver, lambda d: not d.find_elements(By.CSS_SELECTOR, 'tr[data-id="JOB_later_1"]'),
                "the job leaves the delayed list")
        self.open("/queues/later?state=pending")
        bt.text(self.driver, 'tr[data-id="JOB_later_1"]')

        # And from the job's own page.
        seed_delayed(self.valkey, "later", "JOB_later_2", "x")
        self.open("/queues/later/jobs/JOB_later_2")
        bt.click(self.driver, "#view .actions", "Run now")
        bt.wait(self.driver, lambda d: d.execute_script(
            "const d = document.querySelector('dl.fields dd'); return d && d.textContent") == "pending",
            "the job's page says pending")

    def test_delete_all_dead_asks_with_the_count_and_empties_dead(self):
        for i in range(3):
            bt.seed_dead(self.valkey, "trash", f"JOB_trash_{i}", "x", "gone wrong", 1700000000000 + i)
        self.open("/queues/trash?state=dead")
        bt.text(self.driver, 'tr[data-id="JOB_trash_0"]')
        c = self.valkey.client()
        bt.click(self.driver, "#view .actions", "Delete all dead")
        alert = bt.wait(self.driver, lambda d: d.switch_to.alert, "a confirmation")
        self.assertIn("Delete all 3 dead jobs of trash", alert.text)
        alert.dismiss()
        self.assertEqual(c.zcard("emq:{trash}:dead"), 3, "dismissed: nothing deleted")
        bt.click(self.driver, "#view .actions", "Delete all dead")
        bt.wait(self.driver, lambda d: d.switch_to.alert, "a confirmation").accept()
        bt.wait_server(lambda: c.zcard("emq:{trash}:dead") == 0, "dead empty")
        self.assertEqual(c.exists("emq:{trash}:job:JOB_trash_0"), 0, "rows and all")
        bt.wait(self.driver, lambda d: d.execute_script(
            "return document.querySelector('.tabs a[data-state=\"dead\"]').textContent") == "dead (0)",
            "the Dead tab counts 0")
        bt.wait(self.driver, lambda d: not d.find_elements(By.CSS_SELECTOR, "#jobs tbody tr"), "no dead rows")

    def test_a_kept_completed_row_offers_no_cancel(self):
        c = self.valkey.client()
        c.hset("emq:{kept}:job:JOB_done", mapping={"state": "completed", "attempts": "1", "payload": "p",
                                                     "result": "ok"})
        c.sadd("{emq}:queues", "kept")
        self.open("/queues/kept/jobs/JOB_done")
        bt.text(self.driver, 'pre[data-field="result"]')
        labels = self.driver.execute_script("return [...document.querySelectorAll('#view button')].map((b) => b.textContent)")
        self.assertNotIn("Cancel", labels, "cancel would delete the kept row")

    def test_a_dead_job_whose_unique_key_is_held_stays_dead_and_the_page_names_the_holder(self):
        bt.seed_dead(self.valkey, "digests", "JOB_digest_old", "x", "smtp down", 1700000000000)
        c = self.valkey.client()
        c.hset("emq:{digests}:job:JOB_digest_old", mapping={"unique": "digest:ada", "unique_mode": "finished"})
        bt.emq(self.valkey, "enqueue", "digests", "y", "--id", "JOB_digest_new", "--unique", "digest:ada")
        self.open("/queues/digests/jobs/JOB_digest_old")
        fields = bt.text(self.driver, "dl.fields")
        self.assertIn("digest:ada", fields, "the job's page shows its unique key")
        self.assertIn("finished", fields, "and its mode")
        bt.click(self.driver, "#view .actions", "Retry")
        notice = bt.wait(self.driver, lambda d: d.execute_script(
            "const n = document.getElementById('notice'); return n && n.textContent.includes('held by') && "
            "n.textContent"), "the refusal")
        self.assertIn("JOB_digest_old stays dead: its unique key is held by JOB_digest_new (pending)", notice)
        self.assertEqual(c.hget("emq:{digests}:job:JOB_digest_old", "state"), "dead")

        self.open("/queues/digests?state=dead")
        bt.text(self.driver, 'tr[data-id="JOB_digest_old"]')
        bt.click(self.driver, "#view", "Retry all dead")
        bt.wait(self.driver, lambda d: d.switch_to.alert, "a confirmation").accept()
        notice = bt.wait(self.driver, lambda d: d.execute_script(
            "const n = document.getElementById('notice'); return n && n.textContent.startsWith('Moved') && "
            "n.textContent"), "the answer")
        self.assertEqual(notice, "Moved 0 dead jobs to pending; 1 stayed dead: another live job holds their unique key")

    def test_the_queue_page_with_its_buttons_and_none_read_only(self):
        c = self.valkey.client()
        seed_delayed(self.valkey, "partner", "JOB_partner_1", '{"order":4711}')
        c.hset("emq:{partner}:schedules", mapping={"hourly-sync": SCHEDULE, "<b>x</b>": SCHEDULE})
        c.hset("emq:{partner}:meta", mapping={"max_active": "20", "rate_max": "100", "rate_window_ms": "1000"})
        self.open("/queues/partner?state=delayed")
        bt.text(self.driver, 'tr[data-id="JOB_partner_1"]')
        # A hostile schedule name is a name, not markup.
        name = bt.text(self.driver, '#schedules tbody tr[data-schedule="<b>x</b>"] td')
        self.assertTrue(name.startswith("<b>x</b>"), name)
        self.assertEqual(self.driver.find_elements(By.CSS_SELECTOR, "#schedules b"), [])
        bt.wait(self.driver, lambda d: d.find_elements(By.CSS_SELECTOR, "#limits-form input[name=max_active]"),
                "the limits form")
        os.makedirs(bt.ARGS.artifacts, exist_ok=True)
        self.driver.set_window_size(1400, 1250)  # down to the delayed job's Run now
        try:
            self.driver.save_screenshot(os.path.join(bt.ARGS.artifacts, "web-actions.png"))
        finally:
            self.driver.set_window_size(1400, 900)

        bt.click(self.driver, '#schedules tr[data-schedule="hourly-sync"]', "Fire now")
        bt.wait_server(lambda: c.zcard("emq:{partner}:pending") == 1, "the fire's job pending")
        # Typed as a user types (an input event): the form keeps it across the view's redraws.
        self.driver.execute_script(bt.TYPE, "#limits-form input[name=max_active]", "5")
        bt.click(self.driver, "#limits-form", "Set limits")
        bt.wait_server(lambda: c.hget("emq:{partner}:meta", "max_active") == "5", "max_active 5")
        bt.wait(self.driver, lambda d: "5 (active now" in (d.execute_script(bt.TEXT, "#limits") or ""),
                "the limits section shows the new value")

        ro = bt.EmqWeb(self.valkey, "--read-only")
        try:
            self.driver.get(ro.base + "/queues/partner?state=delayed")
            bt.text(self.driver, 'tr[data-id="JOB_partner_1"]')
            bt.text(self.driver, "#schedules")
            self.assertEqual(self.driver.find_elements(By.CSS_SELECTOR, "#view button:not([data-range])"), [])
            self.assertEqual(self.driver.find_elements(By.CSS_SELECTOR, "#limits-form"), [])
        finally:
            ro.close()


if __name__ == "__main__":
    # browser_test's main: its arguments and checks, running this module's tests.
    sys.exit(bt.main())
