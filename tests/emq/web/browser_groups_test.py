#!/usr/bin/env python3
"""A queue's groups in emq web, in a real browser: headless Chromium against
a real valkey-server and a real `emq web` (no daemon: what the page does
stays put for the test to read in the server). The jobs are enqueued by the
Python client (clients/python), the wire's optioned enqueue with a group.

The queue's page lists its groups with the largest backlog first; Pause on
a group's row writes `paused=1` into `emq:{q}:groups` for it, and the row
then says paused with a Resume; the group's name opens its page, which lists
its pending jobs in claim order, and Resume there leaves it running by the
default again; the weight and caps form writes the group's own policy;
under --read-only (a class of its own) the groups show and no button or form is drawn. A
screenshot of a queue page with its groups is saved under --artifacts
(docs/web-groups.png is a copy). The helpers are browser_test.py's.

  browser_groups_test.py --emq build/bin/emq --emqd build/bin/emqd --artifacts build/test-artifacts
"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "..", "..", "clients", "python"))
import browser_test as bt  # noqa: E402  (the path above first)
from echomq import Queue  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402

# The groups' names in the table's order, in one task of the page.
GROUP_ROWS = "return [...document.querySelectorAll('#groups tbody tr')].map((r) => r.dataset.group);"
JOB_ROWS = "return [...document.querySelectorAll('#group-jobs tbody tr')].map((r) => r.dataset.id);"


def seed(valkey, queue, jobs_per_group):
    q = Queue(valkey.url(), queue)
    ids = {}
    for group, n in jobs_per_group.items():
        ids[group] = [q.enqueue(f"work of {group} {i}", group=group) for i in range(n)]
    valkey.client().sadd("{emq}:queues", queue)
    return ids


class Groups(bt.Bare):
    def test_the_largest_backlog_first_and_a_group_paused_from_the_page(self):
        ids = seed(self.valkey, "tenants", {"small": 1, "big": 30, "mid": 10})
        c = self.valkey.client()
        self.open("/queues/tenants")
        bt.wait(self.driver, lambda d: d.execute_script(GROUP_ROWS) == ["big", "mid", "small"],
                "the groups, largest backlog first")
        row = bt.cells(self.driver, 'tr[data-group="big"]')
        self.assertEqual(row[:6], ["big", "30", "0", "1", "–", "–"], row)
        self.assertRegex(row[6], r"^rotation #\d+$", row)
        self.assertIn("3 groups · 41 pending in groups", bt.text(self.driver, "#groups-summary"))
        self.assertIn("41 more pending jobs wait in their groups", bt.text(self.driver, "#grouped-pending"),
                      "the Pending tab, which lists the pending set, says where the grouped jobs are")

        bt.click(self.driver, 'tr[data-group="big"]', "Pause")
        bt.wait_server(lambda: c.hget("emq:{tenants}:groups", "big") == "paused=1", "big paused=1 in the server")
        self.assertIsNone(c.hget("emq:{tenants}:groups", "mid"), "the others untouched")
        bt.wait(self.driver, lambda d: d.execute_script(bt.CELLS, 'tr[data-group="big"]')[5] == "paused",
                "the row says paused")
        bt.click(self.driver, 'tr[data-group="big"]', "Resume")  # drawn in Pause's place
        bt.wait_server(lambda: c.hget("emq:{tenants}:groups", "big") is None, "big runs by the default again")
        bt.click(self.driver, 'tr[data-group="big"]', "Pause")
        bt.wait_server(lambda: c.hget("emq:{tenants}:groups", "big") == "paused=1", "big paused again")
        bt.wait(self.driver, lambda d: d.execute_script(bt.CELLS, 'tr[data-group="big"]')[5] == "paused",
                "the row says paused again")
        os.makedirs(bt.ARGS.artifacts, exist_ok=True)
        self.driver.save_screenshot(os.path.join(bt.ARGS.artifacts, "web-groups.png"))

        # Click through to the group's page: its jobs in claim order (lane, then id).
        bt.wait(self.driver, lambda d: d.execute_script(
            "const a = document.querySelector('tr[data-group=\"big\"] a'); if (a) a.click(); return !!a;"), "big's link")
        bt.wait(self.driver, lambda d: d.execute_script(JOB_ROWS) == sorted(ids["big"]), "big's 30 jobs in claim order")
        self.assertIn("weight 1, paused", bt.text(self.driver, "#group-fields"))
        bt.click(self.driver, "#view .actions", "Resume")
        bt.wait_server(lambda: c.hget("emq:{tenants}:groups", "big") is None, "big resumed from its page")

        # Weight and caps from the group's page.
        self.open("/queues/tenants/groups/mid")
        bt.wait(self.driver, lambda d: d.find_elements(By.CSS_SELECTOR, "#group-form input[name=weight]"), "the form")
        self.driver.execute_script(bt.TYPE, "#group-form input[name=weight]", "3")
        self.driver.execute_script(bt.TYPE, "#group-form input[name=max_active]", "5")
        bt.click(self.driver, "#group-form", "Set")
        bt.wait_server(lambda: c.hget("emq:{tenants}:groups", "mid") == "weight=3 max_active=5", "mid's policy")
        bt.wait(self.driver, lambda d: "weight 3, max_active 5" in (d.execute_script(bt.TEXT, "#group-fields") or ""),
                "the page shows the policy it runs by")

    def test_a_group_paused_before_its_first_job_is_listed_and_resumed_from_the_page(self):
        c = self.valkey.client()
        c.sadd("{emq}:queues", "quiet")
        bt.emq(self.valkey, "group", "pause", "quiet", "acme")
        self.open("/queues/quiet")
        bt.wait(self.driver, lambda d: d.execute_script(GROUP_ROWS) == ["acme"], "acme listed, with no jobs")
        row = bt.cells(self.driver, 'tr[data-group="acme"]')
        self.assertEqual(row[:3], ["acme", "0", "0"], row)
        self.assertEqual(row[5], "paused", row)
        bt.click(self.driver, 'tr[data-group="acme"]', "Resume")
        bt.wait_server(lambda: c.hget("emq:{quiet}:groups", "acme") is None, "acme runs by the default again")


class ReadOnlyGroups(bt.Bare):
    """`emq web --read-only`: the groups show, no action is drawn."""

    @classmethod
    def setUpClass(cls):
        cls.valkey = bt.Valkey()
        cls.web = bt.EmqWeb(cls.valkey, "--read-only")
        cls.driver = bt.browser()

    def test_the_groups_show_and_no_button_or_form(self):
        seed(self.valkey, "tenants", {"big": 3, "small": 1})
        self.open("/queues/tenants")
        bt.wait(self.driver, lambda d: d.execute_script(GROUP_ROWS) == ["big", "small"], "the groups")
        self.assertEqual(self.driver.find_elements(By.CSS_SELECTOR, "#groups button"), [])
        self.open("/queues/tenants/groups/big")
        bt.wait(self.driver, lambda d: len(d.execute_script(JOB_ROWS)) == 3, "big's jobs")
        self.assertEqual(self.driver.find_elements(By.CSS_SELECTOR, "#group-form, #view .actions button"), [])


if __name__ == "__main__":
    # browser_test's main: its arguments and checks, running this module's tests.
    sys.exit(bt.main())
