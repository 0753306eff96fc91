#!/usr/bin/env python3
"""emq web in a real browser: headless Chromium driven by Selenium against
a real valkey-server and a real `emq web` process.

What an operator does with the page is checked in the server, not in the
page alone: the overview lists the queues; a queue's dead jobs show their
errors; a dead job's Retry button moves it to pending (one whose id is
not UTF-8 too, from its own view, and Cancel deletes it); "Retry all" asks
first; the Pause form writes who, why and until when into the queue's
meta, and Resume deletes them; a queue no daemon serves is marked; Quiet
on the Daemons page shows a real emqd's answer, after which it claims
nothing; hostile payloads, errors
and ids stay text; --read-only shows no buttons; the page says when the
server cannot be reached and recovers when it is back. A real emqd, held
by a queue's max_active, makes the page say "held back", and stop saying
it when the limit is lifted; its schedule's row links to the last fire's
job; a flow's parent and children link to each other, and a child whose
row is gone shows as an orphan; a traced job's page shows its trace id,
a link into the tracing tool with --trace-url. Screenshots of the
overview and of a queue page are saved under --artifacts.

A missing browser, driver or Selenium is a failure, never a skip: run
scripts/install-deps.sh (chromium, chromium-driver, python3-selenium).

  browser_test.py --emq build/bin/emq --emqd build/bin/emqd --artifacts build/test-artifacts
"""
import argparse
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import unittest

ARGS = None

try:
    import redis
    from selenium import webdriver
    from selenium.common.exceptions import NoAlertPresentException
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait
except ImportError as e:  # a failure, not a skip: CI must have them
    print(f"browser_test: {e}; install python3-selenium and python3-redis (scripts/install-deps.sh)", file=sys.stderr)
    sys.exit(1)

# The page refreshes every 5 s; a few refreshes is plenty.
WAIT_S = 20


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Valkey:
    """A valkey-server on a free loopback port, in a private directory."""

    def __init__(self):
        self.dir = tempfile.mkdtemp(prefix="emq-web-test-")
        self.port = free_port()
        self.proc = None
        self.start()

    def start(self):
        self.proc = subprocess.Popen(
            ["valkey-server", "--port", str(self.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
             "--dir", self.dir],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        client = redis.Redis(port=self.port)
        deadline = time.monotonic() + 10
        while True:
            try:
                client.ping()
                return
            except redis.exceptions.ConnectionError:
                if time.monotonic() > deadline:
                    raise RuntimeError("valkey-server did not start")
                time.sleep(0.05)

    def stop(self):
        if self.proc:
            self.proc.terminate()
            self.proc.wait(10)
            self.proc = None

    def close(self):
        self.stop()
        shutil.rmtree(self.dir, ignore_errors=True)

    def url(self):
        return f"valkey://127.0.0.1:{self.port}/0"

    def client(self):
        return redis.Redis(port=self.port, decode_responses=True)


class EmqWeb:
    """`emq web` on a free port; the port read from the line it prints."""

    def __init__(self, valkey, *extra):
        env = {k: v for k, v in os.environ.items() if not k.startswith("EMQ_")}
        env["EMQ_URL"] = valkey.url()
        self.proc = subprocess.Popen([ARGS.emq, "web", "--listen", "127.0.0.1:0", *extra], env=env,
                                     stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        line = self.proc.stdout.readline()
        m = re.search(r"serving http://[^ ]*:(\d+)/", line)
        if not m:
            raise RuntimeError(f"emq web did not start: {line}{self.proc.stdout.read()}")
        self.base = f"http://127.0.0.1:{m.group(1)}"

    def close(self):
        self.proc.terminate()
        self.proc.wait(10)
        self.proc.stdout.close()


def emq(valkey, *args, stdin=None):
    env = {k: v for k, v in os.environ.items() if not k.startswith("EMQ_")}
    env["EMQ_URL"] = valkey.url()
    out = subprocess.run([ARGS.emq, *args], env=env, input=stdin, capture_output=True, text=True)
    if out.returncode != 0:
        raise AssertionError(f"emq {' '.join(args)}: exit {out.returncode}: {out.stderr}")
    return out.stdout.strip()


def enqueue(valkey, queue, payload):
    return emq(valkey, "enqueue", queue, payload)


class Emqd:
    """A real emqd on the server: queue "partner" (four slots, max_active 2,
    jobs that sleep a minute) and a schedule "tick" every 2 s into
    "cronq", a queue no daemon claims from, so its fires stay pending."""

    CONFIG = """
valkey: {{ url: "{url}" }}
metrics: {{ listen: "" }}
log: {{ level: warn }}
shutdown: {{ drain_timeout_s: 1 }}
queues:
  - name: partner
    concurrency: 4
    limits: {{ max_active: 2 }}
    handler: {{ type: exec, command: ["sleep", "60"], timeout_s: 120 }}
schedules:
  - name: tick
    queue: cronq
    every: 2s
"""

    def __init__(self, valkey, config_text=None):
        self.dir = tempfile.mkdtemp(prefix="emq-web-emqd-")
        config = os.path.join(self.dir, "emqd.yaml")
        with open(config, "w") as f:
            f.write((config_text or self.CONFIG).format(url=valkey.url()))
        self.log = open(os.path.join(self.dir, "emqd.log"), "w+")
        env = {k: v for k, v in os.environ.items() if not k.startswith("EMQ_")}
        self.proc = subprocess.Popen([ARGS.emqd, "--config", config], env=env, stdout=self.log,
                                     stderr=subprocess.STDOUT)

    def close(self):
        self.proc.terminate()
        self.proc.wait(30)
        self.log.close()
        shutil.rmtree(self.dir, ignore_errors=True)


# A daemon of its own for the Quiet button: beats every 0.5 s.
QUIET_CONFIG = """
valkey: {{ url: "{url}" }}
metrics: {{ listen: "" }}
log: {{ level: warn }}
daemon: {{ name: web-quiet, beat_s: 0.5 }}
shutdown: {{ drain_timeout_s: 1 }}
queues:
  - name: quietq
    handler: {{ type: exec, command: ["cat"] }}
"""


def seed_dead(valkey, queue, job_id, payload, error, died_ms):
    """A dead job as a worker's last failure leaves it."""
    c = valkey.client()
    c.hset(f"emq:{{{queue}}}:job:{job_id}",
           mapping={"state": "dead", "attempts": "5", "payload": payload, "failures": "5", "error": error})
    c.zadd(f"emq:{{{queue}}}:dead", {job_id: died_ms})
    c.sadd("{emq}:queues", queue)


def browser():
    options = webdriver.ChromeOptions()
    options.binary_location = shutil.which("chromium") or "/usr/bin/chromium"
    for a in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-proxy-server",
              "--window-size=1400,900"):
        options.add_argument(a)
    driver_path = shutil.which("chromedriver") or "/usr/bin/chromedriver"
    return webdriver.Chrome(service=Service(driver_path), options=options)


def wait(driver, cond, what):
    return WebDriverWait(driver, WAIT_S, poll_frequency=0.1).until(lambda d: cond(d), message=what)


# Finds the button and clicks it in one task of the page, so a refresh
# (which redraws the view every 5 s) cannot swap the element between the
# finding and the clicking. The click runs in a task of its own, so a
# confirmation it opens does not hold up this call.
CLICK = """
const [scope, label] = arguments;
const find = () => {
  const root = document.querySelector(scope);
  return root && [...root.querySelectorAll('button')].find((b) => b.textContent === label);
};
if (!find()) return false;
setTimeout(() => { const b = find(); if (b) b.click(); }, 0);
return true;
"""


# Reads in one task of the page too: the text of the first element a
# selector finds and of its cells, or None while there is none.
TEXT = "const e = document.querySelector(arguments[0]); return e ? e.innerText : null;"
CELLS = """
const e = document.querySelector(arguments[0]);
return e ? [...e.querySelectorAll('td')].map((td) => td.innerText) : null;
"""


# Sets an input's value and says so as typing does, in one task of the page.
TYPE = """
const e = document.querySelector(arguments[0]);
e.value = arguments[1];
e.dispatchEvent(new Event('input'));
"""


def text(driver, selector):
    return wait(driver, lambda d: d.execute_script(TEXT, selector), selector)


def cells(driver, selector):
    return wait(driver, lambda d: d.execute_script(CELLS, selector), selector)


def click(driver, scope, label):
    wait(driver, lambda d: d.execute_script(CLICK, scope, label), f"a {label} button in {scope}")


def wait_server(cond, what):
    deadline = time.monotonic() + WAIT_S
    while not cond():
        if time.monotonic() > deadline:
            raise AssertionError(f"the server never showed: {what}")
        time.sleep(0.05)


def rig(cls, emqd_config=None):
    """A test class's server, `emq web`, emqd (with its config) and browser."""
    cls.valkey = Valkey()
    cls.web = EmqWeb(cls.valkey)
    cls.emqd = Emqd(cls.valkey, emqd_config)
    cls.driver = browser()


def server_ms(client):
    secs, micros = client.time()
    return secs * 1000 + micros // 1000


class Bare(unittest.TestCase):
    """A test class's server, `emq web` and browser, with no daemon: what
    the page does stays put for the test to read in the server."""

    @classmethod
    def setUpClass(cls):
        cls.valkey = Valkey()
        cls.web = EmqWeb(cls.valkey)
        cls.driver = browser()

    @classmethod
    def tearDownClass(cls):
        cls.driver.quit()
        cls.web.close()
        cls.valkey.close()

    def open(self, path):
        self.driver.get(self.web.base + path)


class Page(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        rig(cls)

    @classmethod
    def tearDownClass(cls):
        cls.driver.quit()
        cls.emqd.close()
        cls.web.close()
        cls.valkey.close()

    def open(self, path):
        self.driver.get(self.web.base + path)

    def row(self, selector):
        return wait(self.driver, lambda d: d.find_elements(By.CSS_SELECTOR, selector), selector)[0]

    def test_overview_lists_the_queues(self):
        for i in range(3):
            enqueue(self.valkey, "emails", f"message {i}")
        enqueue(self.valkey, "thumbs", "image 1")
        seed_dead(self.valkey, "thumbs", "JOB_thumb_dead", "image 0", "decoder: not a PNG", 1700000000000)
        self.open("/")
        row = cells(self.driver, 'tr[data-queue="emails"]')
        self.assertEqual(row[0], "emails", row)
        self.assertEqual(row[2], "3", row)  # pending
        row = cells(self.driver, 'tr[data-queue="thumbs"]')
        self.assertEqual(row[5], "1", row)  # dead
        self.assertEqual(row[6], "0", row)  # waiting
        self.assertTrue(self.driver.execute_script(
            "return ['emails', 'thumbs'].every((q) => document.querySelector(`tr[data-queue='${q}'] svg.chart`))"),
            "a chart per queue (its minutes from the server's history: browser_glance_test.py)")
        os.makedirs(ARGS.artifacts, exist_ok=True)
        self.driver.save_screenshot(os.path.join(ARGS.artifacts, "web-overview.png"))

    def test_queue_page_shows_dead_jobs_with_errors_and_retry_moves_one(self):
        for i in range(3):
            seed_dead(self.valkey, "reports", f"JOB_report_{i}", f"report {i}", f"timeout after {i + 30} s",
                      1700000000000 + i)
        self.open("/queues/reports?state=dead")
        self.assertIn("timeout after 32 s", text(self.driver, 'tr[data-id="JOB_report_2"]'))
        ids = self.driver.execute_script(
            "return [...document.querySelectorAll('#jobs tbody tr')].map((tr) => tr.dataset.id)")
        self.assertEqual(ids, ["JOB_report_2", "JOB_report_1", "JOB_report_0"], "newest dead first")
        os.makedirs(ARGS.artifacts, exist_ok=True)
        self.driver.save_screenshot(os.path.join(ARGS.artifacts, "web-queue.png"))

        click(self.driver, 'tr[data-id="JOB_report_2"]', "Retry")
        c = self.valkey.client()
        wait_server(lambda: c.hget("emq:{reports}:job:JOB_report_2", "state") == "pending", "JOB_report_2 pending")
        self.assertIsNotNone(c.zscore("emq:{reports}:pending", "JOB_report_2"))
        self.assertIsNone(c.zscore("emq:{reports}:dead", "JOB_report_2"))
        wait(self.driver, lambda d: not d.find_elements(By.CSS_SELECTOR, 'tr[data-id="JOB_report_2"]'),
             "the retried job leaves the dead list")

    def test_retry_all_asks_first(self):
        for i in range(4):
            seed_dead(self.valkey, "exports", f"JOB_export_{i}", "x", "disk full", 1700000000000 + i)
        self.open("/queues/exports?state=dead")
        self.row('tr[data-id="JOB_export_0"]')
        c = self.valkey.client()

        click(self.driver, "#view", "Retry all dead")
        alert = wait(self.driver, lambda d: d.switch_to.alert, "a confirmation")
        self.assertIn("Retry all 4 dead jobs of exports", alert.text)
        alert.dismiss()
        self.assertEqual(c.zcard("emq:{exports}:dead"), 4, "dismissed: nothing moved")
        click(self.driver, "#view", "Retry all dead")
        wait(self.driver, lambda d: d.switch_to.alert, "a confirmation").accept()
        wait_server(lambda: c.zcard("emq:{exports}:dead") == 0 and c.zcard("emq:{exports}:pending") == 4,
                    "all four moved to pending")

    def test_pause_form_asks_why_and_for_how_long_and_resume_clears_it(self):
        enqueue(self.valkey, "billing", "invoice 1")
        self.open("/")
        c = self.valkey.client()
        self.row('tr[data-queue="billing"]')
        click(self.driver, 'tr[data-queue="billing"]', "Pause…")
        form = self.row('#dialog form[data-queue="billing"]')
        form.find_element(By.NAME, "reason").send_keys("ledger migration <b>")
        form.find_element(By.CSS_SELECTOR, 'select[name="for"] option[value="1h"]').click()
        who = form.find_element(By.NAME, "by")
        who.clear()
        who.send_keys("ops@bastion")
        click(self.driver, "#dialog", "Pause")
        meta = "emq:{billing}:meta"
        wait_server(lambda: c.hget(meta, "paused") == "1", "paused in the meta")
        self.assertEqual(c.hget(meta, "paused_by"), "ops@bastion")
        self.assertEqual(c.hget(meta, "paused_reason"), "ledger migration <b>")
        sec, usec = c.time()
        self.assertAlmostEqual(int(c.hget(meta, "paused_until")) - (sec * 1000 + usec // 1000), 3600000, delta=60000)
        wait(self.driver, lambda d: "ledger migration <b>" in text(d, 'tr[data-queue="billing"]'),
             "the row says who paused it and why")
        self.assertIn("by ops@bastion", text(self.driver, 'tr[data-queue="billing"]'))
        self.assertIn("until 20", text(self.driver, 'tr[data-queue="billing"]'))
        click(self.driver, 'tr[data-queue="billing"]', "Resume")
        wait_server(lambda: c.hget(meta, "paused") is None, "resumed: no paused field")
        self.assertEqual([f for f in c.hkeys(meta) if f.startswith("paused")], [], "resume leaves no pause field")

    def test_a_queue_no_daemon_serves_is_marked(self):
        enqueue(self.valkey, "nobody", "waits for a daemon")
        self.open("/")
        wait(self.driver, lambda d: "no daemon" in text(d, 'tr[data-queue="nobody"]'), "the overview marks it")
        wait(self.driver, lambda d: d.find_elements(By.CSS_SELECTOR, 'tr[data-queue="partner"]'), "partner")
        wait(self.driver, lambda d: "no daemon" not in text(d, 'tr[data-queue="partner"]'),
             "a queue the class's emqd serves is not marked")
        self.open("/queues/nobody")
        self.assertIn("No live daemon serves nobody", text(self.driver, "#unserved"))

    def test_quiet_on_the_daemons_page_shows_the_answer_and_it_claims_nothing_more(self):
        d = Emqd(self.valkey, QUIET_CONFIG)
        c = self.valkey.client()
        try:
            def mine():
                for did in c.zrange("{emq}:daemons", 0, -1):
                    if c.hget("{emq}:daemon:" + did, "host") == "web-quiet":
                        return did
                return None
            wait_server(lambda: mine() is not None, "the daemon in the registry")
            did = mine()
            self.open("/daemons")
            row = f'tr[data-daemon="{did}"]'
            self.assertIn("running", text(self.driver, row))
            click(self.driver, row, "Quiet")
            wait(self.driver, lambda dr: f"{did}: quiet (answered in" in (text(dr, "#notice") or ""),
                 "the daemon's answer on the page")
            self.assertIn("0 jobs still running", text(self.driver, "#notice"))
            self.assertEqual(c.hget("{emq}:daemon:" + did, "state"), "quiet")
            wait(self.driver, lambda dr: "quiet" in text(dr, row), "the row says quiet")
            os.makedirs(ARGS.artifacts, exist_ok=True)
            self.driver.save_screenshot(os.path.join(ARGS.artifacts, "web-daemons.png"))
            job = enqueue(self.valkey, "quietq", "waits")
            beat = int(c.hget("{emq}:daemon:" + did, "beat_ms"))
            wait_server(lambda: int(c.hget("{emq}:daemon:" + did, "beat_ms") or 0) > beat + 1000,
                        "two more beats of the quiet daemon")
            self.assertEqual(c.hget("emq:{quietq}:job:" + job, "state"), "pending", "a quiet daemon claimed")
        finally:
            d.close()

    def test_hostile_payloads_errors_and_ids_stay_text(self):
        hostile = '<img src=x onerror="window.__pwned=1">'
        seed_dead(self.valkey, "hostile", "JOB<img src=x onerror=window.__pwned=2>", hostile,
                  '<script>window.__pwned=3</script>' + hostile, 1700000000000)
        self.open("/queues/hostile?state=dead")
        row = text(self.driver, "#jobs tbody tr")
        self.assertIn(hostile, row)
        self.assertIn("<script>window.__pwned=3</script>", row)
        self.assertIn("JOB<img src=x onerror=window.__pwned=2>", row)
        self.assertEqual(self.driver.execute_script("return document.querySelectorAll('#view img, #view script').length"), 0)
        self.assertIsNone(self.driver.execute_script("return window.__pwned"))
        # The job's own view too, reached by its link.
        self.driver.get(self.driver.execute_script("return document.querySelector('#jobs td.id a').href"))
        self.assertEqual(text(self.driver, 'pre[data-field="payload"]'), hostile)
        self.assertEqual(self.driver.execute_script("return document.querySelectorAll('#view img').length"), 0)
        self.assertIsNone(self.driver.execute_script("return window.__pwned"))

    def test_search_finds_by_error_and_bulk_retry_asks_first(self):
        for i in range(6):
            seed_dead(self.valkey, "billing", f"JOB_bill_{i}", f"invoice {i}",
                      "card declined" if i < 4 else "gateway timeout", 1700000000000 + i)
        self.open("/search?q=declined&queue=billing&state=dead&in=error")
        self.assertEqual(text(self.driver, "#scanned"), "scanned 6 of 6 dead jobs of billing; 4 found")
        ids = self.driver.execute_script(
            "return [...document.querySelectorAll('#found tbody tr')].map((tr) => tr.dataset.id)")
        self.assertEqual(ids, [f"JOB_bill_{i}" for i in (3, 2, 1, 0)], "newest dead first")
        os.makedirs(ARGS.artifacts, exist_ok=True)
        self.driver.save_screenshot(os.path.join(ARGS.artifacts, "web-search.png"))
        c = self.valkey.client()

        click(self.driver, "#bulk", "Retry all 4")
        self.assertIn("Retry 4 dead jobs of billing whose error contains the text?", text(self.driver, "#bulk-question"))
        self.driver.save_screenshot(os.path.join(ARGS.artifacts, "web-search-confirm.png"))
        click(self.driver, "#bulk", "No")
        self.assertEqual(text(self.driver, "#bulk-start"), "Retry all 4", "the button back, the question gone")
        self.assertEqual(c.zcard("emq:{billing}:dead"), 6, "answered no: nothing moved")

        # One of them is retried by someone else between the search and the action.
        emq(self.valkey, "dead", "retry", "billing", "JOB_bill_0")
        click(self.driver, "#bulk", "Retry all 4")
        click(self.driver, "#bulk", "Yes, retry all 4")
        self.assertEqual(text(self.driver, "#bulk-result"), "Retried 3; 1 had changed state and were left alone.")
        self.assertEqual(c.zcard("emq:{billing}:dead"), 2)
        self.assertEqual(sorted(c.zrange("emq:{billing}:dead", 0, -1)), ["JOB_bill_4", "JOB_bill_5"])

    def test_the_header_box_jumps_to_a_job_by_its_id(self):
        seed_dead(self.valkey, "jumpq", "JOB_jump_1", "x", "e", 1700000000000)
        self.open("/")
        box = self.row("#search-box input[name=q]")
        box.send_keys("JOB_jump_1\n")
        wait(self.driver, lambda d: d.current_url.endswith("/queues/jumpq/jobs/JOB_jump_1"), "the job's page")
        self.assertEqual(text(self.driver, 'pre[data-field="payload"]'), "x")

    def test_hostile_text_found_by_search_stays_text(self):
        hostile = '<img src=x onerror="window.__pwned=4">'
        seed_dead(self.valkey, "hostile2", "JOB_h2", hostile, hostile, 1700000000000)
        self.open("/search?q=onerror&queue=hostile2&state=dead&in=payload")
        self.assertIn(hostile, text(self.driver, "#found tbody tr"))
        self.assertEqual(self.driver.execute_script("return document.querySelectorAll('#view img').length"), 0)
        self.assertIsNone(self.driver.execute_script("return window.__pwned"))

    def test_an_id_that_is_not_utf8_is_viewed_retried_and_cancelled(self):
        # A peer may write any id past "JOB": its links carry its exact bytes.
        job_id = b"JOB_\xff\xfe-bin"
        row = b"emq:{binids}:job:" + job_id
        raw = redis.Redis(port=self.valkey.port)
        raw.hset(row, mapping={b"state": b"dead", b"attempts": b"5", b"payload": b"binary id payload",
                               b"failures": b"5", b"error": b"e"})
        raw.zadd(b"emq:{binids}:dead", {job_id: 1700000000000})
        raw.sadd("{emq}:queues", "binids")
        self.open("/queues/binids?state=dead")
        href = wait(self.driver, lambda d: d.execute_script(
            "const a = document.querySelector('#jobs td.id a'); return a && a.getAttribute('href');"), "the job's link")
        self.assertEqual(href, "/queues/binids/jobs/%4a%4f%42%5f%ff%fe%2d%62%69%6e")
        self.open(href)
        self.assertEqual(text(self.driver, 'pre[data-field="payload"]'), "binary id payload")
        click(self.driver, "#view .actions", "Retry")
        wait_server(lambda: raw.hget(row, b"state") == b"pending", "the job retried by its bytes")
        click(self.driver, "#view .actions", "Cancel")
        wait(self.driver, lambda d: d.switch_to.alert, "a confirmation").accept()
        wait_server(lambda: raw.exists(row) == 0, "the job cancelled by its bytes: its row is gone")

    def test_a_daemon_held_back_by_max_active_shows_it(self):
        for i in range(5):
            enqueue(self.valkey, "partner", f"call {i}")
        c = self.valkey.client()
        wait_server(lambda: c.zcard("emq:{partner}:active") == 2 and c.zcard("emq:{partner}:pending") == 3,
                    "emqd claimed two, max_active holding the rest")
        self.open("/queues/partner")
        wait(self.driver, lambda d: "held back: max_active 2 reached (2 active)" in (text(d, "#limits") or ""),
             "the queue page says it is held back, and by what")
        self.assertIn("2 (active now 2)", text(self.driver, "#limits"))
        os.makedirs(ARGS.artifacts, exist_ok=True)
        self.driver.save_screenshot(os.path.join(ARGS.artifacts, "web-limits.png"))
        self.open("/")
        cell = wait(self.driver, lambda d: cells(d, 'tr[data-queue="partner"]')[10], "the limits cell")
        self.assertIn("max 2 active", cell)
        self.assertIn("held back", cell)
        # Lifted for every daemon at once: emqd fills its four slots, and
        # the page stops saying held back.
        emq(self.valkey, "limit", "partner", "--max-active", "3")
        wait_server(lambda: c.zcard("emq:{partner}:active") == 3, "emqd claimed one more")
        self.open("/queues/partner")
        wait(self.driver, lambda d: "held back: max_active 3 reached (3 active)" in (text(d, "#limits") or ""),
             "held back at the new limit")
        emq(self.valkey, "limit", "partner", "--max-active", "10")
        wait_server(lambda: c.zcard("emq:{partner}:active") == 4, "emqd fills its four slots")
        wait(self.driver, lambda d: "not held back" in (text(d, "#limits") or ""), "no longer held back")
        wait(self.driver, lambda d: "10 (active now 4)" in (text(d, "#limits") or ""), "the new limit shown")

    def test_a_schedule_row_links_to_its_last_fire(self):
        c = self.valkey.client()
        hostile = '<img src=x onerror="window.__pwned=4">'
        c.hset("emq:{cronq}:schedules", hostile, '{"every_ms":60000,"timezone":"UTC"}')
        # A schedule of a group, as `schedules[].group` publishes it.
        c.hset("emq:{cronq}:schedules", "tock", '{"every_ms":3600000,"timezone":"UTC","group":"acme"}')
        wait_server(lambda: c.hget("emq:{cronq}:cron", "tick"), "emqd fired the schedule once")
        self.open("/queues/cronq")
        row = cells(self.driver, 'tr[data-schedule="tick"]')
        self.assertEqual(row[1], "every 2000 ms", row)
        self.assertEqual(row[2], "–", "a schedule without a group")
        self.assertEqual(cells(self.driver, 'tr[data-schedule="tock"]')[2], "acme", "a schedule's group")
        os.makedirs(ARGS.artifacts, exist_ok=True)
        self.driver.save_screenshot(os.path.join(ARGS.artifacts, "web-schedules.png"))
        self.assertRegex(row[4], r"^JOB_", row)
        self.assertEqual(self.driver.execute_script(
            "return document.querySelector('tr[data-schedule] td').innerText"), hostile, "a name stays text")
        self.assertEqual(self.driver.execute_script("return document.querySelectorAll('#view img').length"), 0)
        self.assertIsNone(self.driver.execute_script("return window.__pwned"))
        # Clicked as a user would; the marker moves every 2 s, so the id is
        # read from the link in the same task as the click.
        job_id = wait(self.driver, lambda d: d.execute_script("""
            const a = document.querySelector('tr[data-schedule="tick"] td.id a');
            if (!a) return null;
            setTimeout(() => a.click(), 0);
            return a.textContent;"""), "the last fire's link")
        wait(self.driver, lambda d: d.current_url.endswith("/queues/cronq/jobs/" + job_id), "the job's page")
        self.assertEqual(text(self.driver, "h2.id"), job_id)
        self.assertEqual(c.hget(f"emq:{{cronq}}:job:{job_id}", "schedule"), "tick")
        self.assertIn("tick", text(self.driver, "dl.fields"))

    def test_parent_and_children_link_both_ways_and_orphans_show(self):
        tree = ('{"queue":"sheets","payload":"sheet","children":'
                '[{"queue":"thumbs2","payload":"a.png"},{"queue":"thumbs2","payload":"b.png"}]}')
        ids = emq(self.valkey, "flow", "enqueue", "--json", "-", stdin=tree)
        tree_ids = json.loads(ids)
        parent = tree_ids["id"]
        first, second = sorted(c["id"] for c in tree_ids["children"])
        self.open(f"/queues/sheets/jobs/{parent}")
        row = cells(self.driver, f'tr[data-child="thumbs2:{first}"]')
        self.assertEqual(row[1:], ["pending", "awaits it"], row)
        buttons = [b.text for b in self.driver.find_elements(By.CSS_SELECTOR, "button")]
        self.assertNotIn("Cancel", buttons, "cancel refuses a waiting parent: the page must not offer it")
        # Parent to child, then child back to parent, by their links.
        self.driver.execute_script(
            "document.querySelector(arguments[0]).click()", f'tr[data-child="thumbs2:{first}"] a')
        wait(self.driver, lambda d: d.current_url.endswith(f"/queues/thumbs2/jobs/{first}"), "the child's page")
        self.assertIn("sheets / " + parent, text(self.driver, "#parent"))
        self.assertIn("waiting", text(self.driver, "#parent"))
        buttons = [b.text for b in self.driver.find_elements(By.CSS_SELECTOR, "button")]
        self.assertIn("Cancel", buttons, "a pending child can be cancelled")
        self.driver.execute_script("document.querySelector('#parent a').click()")
        wait(self.driver, lambda d: d.current_url.endswith(f"/queues/sheets/jobs/{parent}"), "back at the parent")
        cells(self.driver, f'tr[data-child="thumbs2:{second}"]')
        self.assertEqual(self.driver.find_elements(By.ID, "orphans"), [])
        # A peer deletes a child's row: the parent waits on an orphan.
        c = self.valkey.client()
        c.delete(f"emq:{{thumbs2}}:job:{second}")
        c.zrem("emq:{thumbs2}:pending", second)
        self.assertIn("Orphaned", text(self.driver, "#orphans"))
        self.assertEqual(cells(self.driver, f'tr[data-child="thumbs2:{second}"]')[1], "row gone · orphan: its row is gone")
        self.assertEqual(cells(self.driver, f'tr[data-child="thumbs2:{first}"]')[1], "pending")
        os.makedirs(ARGS.artifacts, exist_ok=True)
        self.driver.save_screenshot(os.path.join(ARGS.artifacts, "web-flow.png"))

    def test_a_traced_job_shows_its_trace_id_linked_with_trace_url(self):
        trace_id = "4bf92f3577b34da6a3ce929d0e0e4736"
        job = enqueue(self.valkey, "traced", "order 7")
        self.valkey.client().hset(f"emq:{{traced}}:job:{job}", mapping={
            "traceparent": f"00-{trace_id}-00f067aa0ba902b7-01",
            "tracestate": "v=<img src=x onerror=window.__pwned=4>"})
        # Without --trace-url: the id, as text, and no link.
        self.open(f"/queues/traced/jobs/{job}")
        self.assertEqual(text(self.driver, "#job-trace"), trace_id)
        self.assertEqual(self.driver.find_elements(By.CSS_SELECTOR, "#job-trace a"), [])
        # A quote and an ampersand of the template reach the link as they
        # are: an attribute's value, never markup.
        linked = EmqWeb(self.valkey, "--trace-url", "https://tracing.example/trace/{trace_id}?from=emq&q='x'")
        try:
            self.driver.get(linked.base + f"/queues/traced/jobs/{job}")
            link = self.row("#job-trace a")
            self.assertEqual(link.text, trace_id)
            self.assertEqual(link.get_dom_attribute("href"), f"https://tracing.example/trace/{trace_id}?from=emq&q='x'")
            self.assertEqual(self.driver.execute_script("return document.querySelectorAll('#view img').length"), 0)
            self.assertIsNone(self.driver.execute_script("return window.__pwned"))
        finally:
            linked.close()

    def test_read_only_shows_no_buttons(self):
        # Buttons that act; the history chart's range choices only redraw
        # it, and the header's (theme, times, pause) only change the page.
        actions = (By.CSS_SELECTOR, "#view button:not([data-range])")
        seed_dead(self.valkey, "audit", "JOB_audit_0", "x", "bad", 1700000000000)
        ro = EmqWeb(self.valkey, "--read-only")
        try:
            self.driver.get(ro.base + "/")
            self.row('tr[data-queue="audit"]')
            self.assertEqual(self.driver.find_elements(*actions), [])
            self.driver.get(ro.base + "/queues/audit?state=dead")
            self.row('tr[data-id="JOB_audit_0"]')
            self.assertEqual(self.driver.find_elements(*actions), [])
            self.driver.get(ro.base + "/queues/audit/jobs/JOB_audit_0")
            self.row('pre[data-field="payload"]')
            self.assertEqual(self.driver.find_elements(*actions), [])
            self.driver.get(ro.base + "/daemons")
            self.row("#daemons tbody tr")
            self.assertEqual(self.driver.find_elements(*actions), [])
        finally:
            ro.close()


class Outage(unittest.TestCase):
    def test_says_the_server_is_unreachable_and_recovers(self):
        valkey = Valkey()
        web = EmqWeb(valkey)
        driver = browser()
        try:
            enqueue(valkey, "orders", "order 1")
            driver.get(web.base + "/")
            wait(driver, lambda d: d.find_elements(By.CSS_SELECTOR, 'tr[data-queue="orders"]'), "the queue")
            banner = driver.find_element(By.ID, "banner")
            self.assertFalse(banner.is_displayed())
            valkey.stop()
            wait(driver, lambda d: banner.is_displayed() and "cannot be reached" in banner.text,
                 "a banner saying the server cannot be reached")
            valkey.start()
            enqueue(valkey, "orders", "order 2")
            wait(driver, lambda d: not banner.is_displayed(), "the banner goes once the server is back")
            wait(driver, lambda d: d.find_elements(By.CSS_SELECTOR, 'tr[data-queue="orders"]'), "the queue again")
            web.close()
            wait(driver, lambda d: banner.is_displayed() and "emq web cannot be reached" in banner.text,
                 "a banner saying emq web itself cannot be reached")
        finally:
            driver.quit()
            if web.proc.poll() is None:
                web.close()
            valkey.close()


def main():
    global ARGS
    parser = argparse.ArgumentParser()
    parser.add_argument("--emq", required=True)
    parser.add_argument("--emqd", required=True)
    parser.add_argument("--artifacts", required=True)
    ARGS, rest = parser.parse_known_args()
    for program in ("valkey-server", "chromium", "chromedriver"):
        if not shutil.which(program) and not os.path.exists(f"/usr/bin/{program}"):
            print(f"browser_test: {program} is missing; run scripts/install-deps.sh", file=sys.stderr)
            return 1
    result = unittest.main(argv=[sys.argv[0], "-v", *rest], exit=False).result
    return 0 if result.wasSuccessful() and result.testsRun > 0 else 1


if __name__ == "__main__":
    sys.exit(main())
