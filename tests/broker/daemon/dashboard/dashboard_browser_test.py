#!/usr/bin/python3
"""The dashboard in a real browser (issue 20, docs/dashboard.md).

Debian's headless Chromium, driven through chromedriver by Selenium, against
skyslurmd serving the dashboard for the testbed's ready user: log in with the
one-time link (and be refused without it), the clusters' free GPUs while
known jobs run, a routed job appearing, its placement reasons, its log
growing, moving and cancelling it from the page (gone from its cluster's own
squeue), "where would this start?", screenshots of every page at 1280x800
and 390 px wide (no page scrolls sideways at 390 px), and the jobs page's
load time with 10,000 jobs in the store (printed, not asserted).

  python3 dashboard_browser_test.py --build BUILD_DIR [unittest arguments]

Run by ctest (label integration) against scripts/testbed/up's clusters.
Screenshots go to BUILD_DIR/dashboard-screenshots, and also to
$SKYSLURM_SCREENSHOT_DIR when set (docs/dashboard.md: the docs' images).
"""

import argparse
import http.client
import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
import unittest
import urllib.error
import urllib.request

from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By

BUILD = None
TB = os.environ.get("SKYSLURM_TESTBED_DIR", "/tmp/skyslurm-testbed")
CLUSTERS = ["alpha", "beta", "gamma"]
PAGES = ["clusters", "jobs", "job", "explain"]


def slurm_conf(cluster):
    return f"{TB}/clusters/{cluster}/etc/slurm.conf"


def on_cluster(cluster, *argv, check=False):
    env = dict(os.environ, SLURM_CONF=slurm_conf(cluster))
    return subprocess.run(argv, env=env, capture_output=True, text=True, timeout=60, check=check)


def wait_for(what, condition, timeout=60.0, every=0.25):
    """condition() until it is truthy; fails naming `what` and the last value."""
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        try:
            last = condition()
        except Exception as e:  # a page between two renders, an element not there yet
            last = e
        if last and not isinstance(last, Exception):
            return last
        time.sleep(every)
    raise AssertionError(f"{what}: not within {timeout:.0f} s (last: {last!r})")


class UserDaemon:
    """The ready user's skyslurm in a home of its own (as the C++ tests' CopyReadyHome)."""

    def __init__(self, name):
        self.tmp = tempfile.mkdtemp(prefix=f"skyslurm-dash-{name}-")
        self.home = os.path.join(self.tmp, "home")
        shutil.copytree(f"{TB}/home", self.home, symlinks=True)
        state = os.path.join(self.home, ".local/state/skyslurm")
        shutil.rmtree(os.path.join(state, "run"), ignore_errors=True)
        # No daemon state, and no history (decisions, the daemon's log) of
        # the runs before on this testbed.
        for f in os.listdir(state) if os.path.isdir(state) else []:
            if f in ("skyslurmd.db", "skyslurmd.db-wal", "skyslurmd.db-shm", "skyslurmd.lock",
                     "routed", "decisions.log", "skyslurmd.stderr") or f.startswith("skyslurmd.log"):
                os.remove(os.path.join(state, f))
        self.state = state
        self.env = dict(os.environ)
        for name in ["SKYSLURM_CONFIG", "SKYSLURM_SITE_CONFIG", "SKYSLURM_CLUSTERS_FILE",
                     "XDG_CONFIG_HOME", "XDG_STATE_HOME", "XDG_RUNTIME_DIR", "BROWSER", "DISPLAY"]:
            self.env.pop(name, None)
        self.env.update({
            "HOME": self.home,
            "SLURM_CONF": slurm_conf("alpha"),
            "PATH": f"{BUILD}/shim/bin:" + os.environ["PATH"],
            "SKYSLURM_POLL_INTERVAL": "1",
            "SKYSLURM_IDLE_EXIT": "300",
            # The failover these pages show is among the Slurm clusters.
            "SKYSLURM_MIGRATE_AFTER": "600",
        })

    def run(self, *argv, input=None, timeout=120):
        return subprocess.run(list(argv), env=self.env, cwd=self.tmp, capture_output=True,
                              text=True, input=input, timeout=timeout)

    def sky(self, *args, **kw):
        return self.run(f"{BUILD}/shim/skyslurm", *args, **kw)

    def dashboard_url(self):
        out = self.sky("dashboard", "--no-browser")
        assert out.returncode == 0, out.stderr
        return out.stdout.strip().splitlines()[-1]

    def stop(self):
        self.sky("dashboard", "--stop")
        try:
            with open(os.path.join(self.state, "skyslurmd.lock")) as f:
                pid = int(f.read().split()[0])
            os.kill(pid, signal.SIGTERM)
            for _ in range(100):
                os.kill(pid, 0)
                time.sleep(0.1)
        except (OSError, ValueError, IndexError):
            pass
        shutil.rmtree(self.tmp, ignore_errors=True)


def new_browser(profile):
    options = webdriver.ChromeOptions()
    for arg in ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                "--no-first-run", "--disable-background-networking", "--disable-component-update",
                "--disable-sync", f"--user-data-dir={profile}", "--window-size=1280,800"]:
        options.add_argument(arg)
    options.binary_location = shutil.which("chromium") or "/usr/bin/chromium"
    return webdriver.Chrome(service=Service(shutil.which("chromedriver") or "/usr/bin/chromedriver"),
                            options=options)


def read_file(path):
    try:
        with open(path) as f:
            return f.read()
    except FileNotFoundError:
        return ""


# The page's own API request, with the session's second secret from its storage.
FETCH_JS = ("fetch(arguments[0], {credentials: 'same-origin', headers: {'X-Skyslurm-Csrf':"
            " localStorage.getItem('skyslurm-session-secret')}})")


def load_time(browser, address, shown_js):
    """Milliseconds from a reload's navigation start until `shown_js` holds
    (the page's clock), and as this test saw them."""
    browser.get(address)
    t0 = time.monotonic()
    browser.refresh()
    page_ms = browser.execute_async_script(f"""
        const done = arguments[arguments.length - 1];
        const look = () => {{ if ({shown_js}) done(performance.now()); else setTimeout(look, 5); }};
        look();""")
    return page_ms, (time.monotonic() - t0) * 1000


def fetch_time(browser, path):
    """Milliseconds one API answer takes, asked from the page."""
    return browser.execute_async_script(
        "const done = arguments[arguments.length - 1]; const t = performance.now();"
        + FETCH_JS + ".then(r => r.json()).then(() => done(performance.now() - t));", path)


def process_start_ms(runs=50):
    """What starting a process costs here (/bin/true, spawned and reaped): the
    figure the project's measurements are printed beside."""
    t0 = time.monotonic()
    for _ in range(runs):
        os.waitpid(os.posix_spawn("/bin/true", ["/bin/true"], {}), 0)
    return (time.monotonic() - t0) * 1000 / runs


def base_of(url):
    return url.split("/?token=")[0]


class DashboardBrowserTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.user = UserDaemon("main")
        cls.profile = tempfile.mkdtemp(prefix="skyslurm-chromium-")
        cls.browser = None
        try:
            cls.url = cls.user.dashboard_url()
            cls.base = base_of(cls.url)
            cls.browser = new_browser(cls.profile)
            cls.browser.set_page_load_timeout(60)
            cls.viewport(1280, 800)
        except BaseException:
            # tearDownClass is not run after a failed setUpClass: its daemon
            # (kept up while it serves the dashboard) and browser go here.
            if cls.browser:
                cls.browser.quit()
            cls.user.stop()
            shutil.rmtree(cls.profile, ignore_errors=True)
            raise
        cls.fillers = []
        cls.shots = os.path.join(BUILD, "dashboard-screenshots")
        os.makedirs(cls.shots, exist_ok=True)

    @classmethod
    def tearDownClass(cls):
        try:
            cls.browser.quit()
        finally:
            for cluster, job in cls.fillers:
                on_cluster(cluster, "scancel", job)
            for c in CLUSTERS:
                on_cluster(c, "scancel", "-n", "skydash")
            cls.user.stop()
            shutil.rmtree(cls.profile, ignore_errors=True)

    # ------------------------------------------------------------ helpers
    @classmethod
    def viewport(cls, width, height):
        """The page's own size, as a device of that screen (not the window's)."""
        cls.browser.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {
            "width": width, "height": height, "deviceScaleFactor": 1, "mobile": width < 600})

    def logged_in(self):
        """A session of the browser's: a new one-time link opened once."""
        if any(c["name"] == "skyslurm_session" for c in self.browser.get_cookies()) and \
                self.browser.execute_script("return localStorage.getItem('skyslurm-session-secret')"):
            return
        self.browser.get(self.user.dashboard_url())
        wait_for("the session cookie",
                 lambda: any(c["name"] == "skyslurm_session" for c in self.browser.get_cookies()))

    def show(self, fragment):
        self.browser.get(f"{self.base}/#/{fragment}")

    def text(self, css):
        return self.browser.find_element(By.CSS_SELECTOR, css).text

    def action_answer(self):
        """The job page's answer to an action, once it is one: the page says
        "Working…" until the daemon answers (read before that under load)."""
        said = self.text("#job-action-result")
        return "" if said in ("", "Working…") else said

    def fill(self, cluster, gres):
        out = on_cluster(cluster, "sbatch", "--parsable", "-N1", f"--gres={gres}", "-t", "20",
                         "-J", "skydashfill", "-o", "/dev/null", "--wrap", "sleep 1200", check=True)
        job = out.stdout.strip().split(";")[0]
        self.fillers.append((cluster, job))
        wait_for(f"{cluster}:{job} running", lambda: on_cluster(
            cluster, "squeue", "-h", "-j", job, "-o", "%T").stdout.strip() == "RUNNING")

    def submit(self, name, body, *options):
        """`sbatch --parsable OPTIONS name` of a script named skydash: its sky job."""
        script = os.path.join(self.user.tmp, name)
        with open(script, "w") as f:
            f.write("#!/bin/bash\n#SBATCH -J skydash\n" + body)
        out = self.user.run("sbatch", *options, "--parsable", script)
        self.assertEqual(out.returncode, 0, out.stderr)
        job = json.loads(self.user.sky("status", out.stdout.strip(), "--json").stdout)["job"]
        self.assertEqual(str(job["job_id"]), out.stdout.strip())
        return job

    def card_number(self, cluster, css):
        return self.text(f'.cluster-card[data-cluster="{cluster}"] {css}')

    def screenshot(self, page, width):
        name = f"{page}-{width}.png"
        self.browser.save_screenshot(os.path.join(self.shots, name))
        extra = os.environ.get("SKYSLURM_SCREENSHOT_DIR")
        if extra:
            os.makedirs(extra, exist_ok=True)
            shutil.copy(os.path.join(self.shots, name), os.path.join(extra, name))

    # -------------------------------------------------------------- tests
    def test_1_without_the_link_everything_is_refused(self):
        # A fresh browser session: no cookie.
        self.browser.delete_all_cookies()
        self.browser.get(self.base + "/")
        self.assertIn("Open the dashboard with the link", self.browser.find_element(By.TAG_NAME, "body").text)
        for path in ["/v1/clusters", "/v1/table", "/app.js"]:
            with self.assertRaises(urllib.error.HTTPError) as refused:
                urllib.request.urlopen(self.base + path, timeout=10)
            self.assertEqual(refused.exception.code, 403, path)
            refused.exception.close()
        # The link: once. Its token becomes a cookie, and leaves the address.
        url = self.user.dashboard_url()
        self.browser.get(url)
        wait_for("the page without its token", lambda: self.browser.current_url == self.base + "/#/clusters")
        cookie = [c for c in self.browser.get_cookies() if c["name"] == "skyslurm_session"]
        self.assertEqual(len(cookie), 1)
        self.assertTrue(cookie[0]["httpOnly"])
        self.assertEqual(cookie[0].get("sameSite"), "Strict")
        with self.assertRaises(urllib.error.HTTPError) as again:
            urllib.request.urlopen(url, timeout=10)
        self.assertEqual(again.exception.code, 403, "a used link is refused")
        again.exception.close()
        # The page's second secret came in the address's fragment and is kept
        # in this origin's storage; the address no longer shows it.
        secret = self.browser.execute_script("return localStorage.getItem('skyslurm-session-secret')")
        self.assertRegex(secret or "", "^[0-9a-f]{32}$")
        self.assertNotIn("login=", self.browser.current_url)
        # A client that has the cookie alone (a page on another port of this
        # host can be sent it) gets the pages, no answer of the API, and can
        # take no action; with the secret it can.
        host = self.base.split("//")[1]
        login = http.client.HTTPConnection(host, timeout=10)
        login.request("GET", "/?token=" + self.user.dashboard_url().split("token=")[1])
        answer = login.getresponse()
        self.assertEqual(answer.status, 303)
        cookie = answer.getheader("Set-Cookie").split(";")[0]
        own_secret = answer.getheader("Location").split("#login=")[1]
        self.assertIn("HttpOnly", answer.getheader("Set-Cookie"))
        login.close()

        def ask(method, path, headers):
            c = http.client.HTTPConnection(host, timeout=10)
            try:
                c.request(method, path, body=b"{}" if method == "POST" else None, headers=headers)
                return c.getresponse().status
            finally:
                c.close()

        self.assertEqual(ask("GET", "/", {"Cookie": cookie}), 200)
        self.assertEqual(ask("GET", "/v1/clusters", {"Cookie": cookie}), 403)
        self.assertEqual(ask("POST", "/v1/jobs/sky-x/cancel", {"Cookie": cookie}), 403)
        self.assertEqual(ask("GET", "/v1/clusters", {"Cookie": cookie, "X-Skyslurm-Csrf": secret}), 403,
                         "another session's secret")
        self.assertEqual(ask("GET", "/v1/clusters", {"Cookie": cookie, "X-Skyslurm-Csrf": own_secret}), 200)
        # What the pages do not use is not there: no submission, no Slurm command.
        for path in ["/v1/jobs", "/v1/slurm", "/v1/shutdown", "/v1/dashboard"]:
            self.assertEqual(ask("POST", path, {"Cookie": cookie, "X-Skyslurm-Csrf": own_secret}), 404, path)
        # A name rebound to 127.0.0.1 (DNS rebinding) is not this host; another
        # local port (ssh -L 8888:127.0.0.1:P) is.
        self.assertEqual(ask("GET", "/", {"Cookie": cookie, "Host": "evil.example:" + host.split(":")[1]}), 403)
        self.assertEqual(ask("GET", "/", {"Cookie": cookie, "Host": "localhost:8888"}), 200)

    def test_1b_the_browser_is_never_given_the_link_in_its_command_line(self):
        # $BROWSER records how it was started: a file of the user's, 0600,
        # that leads to the link; the token is not in any argv.
        seen = os.path.join(self.user.tmp, "browser-argv")
        browser = os.path.join(self.user.tmp, "browser")
        with open(browser, "w") as f:
            f.write(f"#!/bin/sh\nprintf '%s\\n' \"$@\" > {seen}\n")
        os.chmod(browser, 0o755)
        env = dict(self.user.env, BROWSER=browser)
        out = subprocess.run([f"{BUILD}/shim/skyslurm", "dashboard"], env=env, capture_output=True,
                             text=True, timeout=60)
        self.assertEqual(out.returncode, 0, out.stderr)
        url = out.stdout.strip().splitlines()[-1]
        argv = wait_for("the browser started", lambda: read_file(seen))
        self.assertNotIn(url.split("token=")[1], argv)
        opener = argv.strip().removeprefix("file://")
        self.assertEqual(os.stat(opener).st_mode & 0o077, 0)
        self.assertIn(url, read_file(opener))

    def test_2_the_clusters_show_their_free_gpus(self):
        # Known jobs: alpha 8 of 16 GPUs busy, beta 4 of 8, gamma idle (24).
        for c in CLUSTERS:  # the tests before cancelled theirs; scancel returns before they leave
            wait_for(f"{c} idle", lambda c=c: on_cluster(
                c, "squeue", "-h", "-t", "R,PD", "-o", "%i %j").stdout.strip() == "", timeout=60)
        self.fill("alpha", "gpu:h100:8")
        self.fill("beta", "gpu:nvidia_h100_80gb_hbm3:4")
        self.logged_in()
        self.show("clusters")
        expected = {"alpha": ("8", "16"), "beta": ("4", "8"), "gamma": ("24", "24")}
        for c, (free, total) in expected.items():
            wait_for(f"{c}'s card: {free} of {total} GPUs free", lambda c=c, free=free, total=total: (
                self.card_number(c, ".free-gpus") == free and self.card_number(c, ".total-gpus") == total))
        cards = [e.get_attribute("data-cluster")
                 for e in self.browser.find_elements(By.CSS_SELECTOR, ".cluster-card")]
        configured = [c["name"] for c in self.api("/v1/clusters")["clusters"]]
        self.assertEqual(cards, configured)
        for c in ["alpha", "beta", "gamma", "delta", "kappa"]:
            self.assertIn(c, cards)
        self.assertIn("reachable", self.text('.cluster-card[data-cluster="gamma"]'))
        # The charts: the daemon's own samples (one every 12 polls, 1 s here).
        wait_for("two GPU samples of alpha", lambda: len(
            self.api("/v1/gpu-history?hours=1")["samples"].get("alpha", [])) >= 2, timeout=60)
        self.show("clusters")
        self.browser.refresh()
        wait_for("alpha's chart drawn", lambda: self.browser.find_element(
            By.CSS_SELECTOR, '.cluster-card[data-cluster="alpha"] polyline.free').get_attribute("points"))
        self.screenshot("clusters", 1280)

    def api(self, path):
        """The page's own API with the browser's session."""
        return self.browser.execute_async_script(
            "const done = arguments[arguments.length - 1];" + FETCH_JS + ".then(r => r.json()).then(done);",
            path)

    def test_3_a_routed_job_its_reasons_its_log_and_its_cancel(self):
        self.logged_in()
        job = self.submit("count.sh", "#SBATCH --gpus=1\n#SBATCH -t 5\n"
                          "for i in $(seq 1 300); do echo \"line $i\"; sleep 1; done\n",
                          "--sky-any-cluster=beta")
        job_id, sky_id, native = str(job["job_id"]), job["sky_id"], job["native_id"]
        self.assertEqual(job["cluster"], "beta")
        self.show("jobs")
        row = f'#jobs-table tr[data-key="{sky_id}"]'
        wait_for("the routed job's row", lambda: self.browser.find_element(By.CSS_SELECTOR, row))
        self.assertIn("beta", self.text(row))
        self.assertIn(job_id, self.text(row))
        self.screenshot("jobs", 1280)
        self.browser.find_element(By.CSS_SELECTOR, f"{row} a").click()
        wait_for("its page", lambda: sky_id in self.text("#job-title"))
        # Its placement with the reason, and explain's view of it (each
        # cluster's translation): the same words `skyslurm explain` prints.
        wait_for("its placement history", lambda: "submitted" in self.text("#job-events") and
                 "beta/h100-cluster" in self.text("#job-events"))
        explain = wait_for("its translation per cluster", lambda: self.text("#job-explain")
                           if "Placement" in self.text("#job-explain") else "", timeout=90)
        for c in CLUSTERS:
            self.assertIn(c, explain)
        first = wait_for("its log", lambda: len(self.text("#job-log")) if "line 3" in self.text("#job-log") else 0,
                         timeout=90)
        wait_for("its log growing", lambda: len(self.text("#job-log")) > first and "line 6" in self.text("#job-log"),
                 timeout=60)
        self.screenshot("job", 1280)
        # Move now: a running job stays, and the page says why.
        wait_for("running", lambda: "RUNNING" in self.text("#job-state"))
        self.browser.find_element(By.ID, "job-move").click()
        self.assertIn("cannot move", wait_for("the move's answer", self.action_answer))
        # Cancel: twice (the page asks once more), then gone from beta's own queue.
        cancel = self.browser.find_element(By.ID, "job-cancel")
        cancel.click()
        cancel.click()
        wait_for("gone from beta's squeue", lambda: on_cluster(
            "beta", "squeue", "-h", "-j", native, "-o", "%T").stdout.strip() in ("", "CANCELLED"))
        wait_for("CANCELLED on its page", lambda: "CANCELLED" in self.text("#job-state"))
        self.assertTrue(self.browser.find_element(By.ID, "job-cancel").get_attribute("disabled"))
        type(self).cancelled_job = sky_id

    def test_3b_move_now_moves_a_pending_job_by_the_daemons_rules(self):
        # alpha and beta full (the fillers of test_2 and one more each): the
        # job pends on one of them; the other is freed; "Move now" takes it
        # there at once (the daemon's own moves wait migrate_after, 600 s here).
        self.logged_in()
        self.fill("alpha", "gpu:h100:8")
        self.fill("beta", "gpu:nvidia_h100_80gb_hbm3:4")
        job = self.submit("wait.sh", "#SBATCH -N1\n#SBATCH --gpus-per-node=h100:4\n#SBATCH -t 5\n"
                          "#SBATCH -o /dev/null\nsleep 120\n", "--sky-any-cluster=alpha,beta")
        pends_on = job["cluster"]
        other = "beta" if pends_on == "alpha" else "alpha"
        self.show("job/" + job["sky_id"])
        wait_for("pending on " + pends_on, lambda: "PENDING" in self.text("#job-state"))
        for cluster, filler in [f for f in self.fillers if f[0] == other]:
            on_cluster(cluster, "scancel", filler)
        self.fillers = [f for f in self.fillers if f[0] != other]
        wait_for(f"{other} seen free by the daemon", lambda: [
            c for c in self.api("/v1/clusters")["clusters"] if c["name"] == other][0]["free_gpus"] >= 4)
        # Its estimates are reused for 2 s (the daemon's estimate cache): those
        # made while it was full are gone by then.
        time.sleep(3)
        self.browser.find_element(By.ID, "job-move").click()
        self.assertIn("next look", wait_for("the move asked", self.action_answer))
        try:
            wait_for(f"moved to {other}", lambda: other in self.text("#job-where") and
                     "moved" in self.text("#job-events"), timeout=60)
        except AssertionError as e:
            events = self.api(f"/v1/jobs/{job['sky_id']}")["events"]
            raise AssertionError(f"{e}; its history: {json.dumps(events, indent=1)}") from None
        events = self.api(f"/v1/jobs/{job['sky_id']}")["events"]
        kinds = [e["kind"] for e in events]
        self.assertIn("move-started", kinds)
        self.assertIn("moved", kinds)
        self.assertIn("asked to move now", [e for e in events if e["kind"] == "move-started"][0]["detail"])
        on_cluster(other, "scancel", "-n", "skydash")
        on_cluster(pends_on, "scancel", "-n", "skydash")

    def test_4_where_would_this_start(self):
        self.logged_in()
        self.show("explain")
        box = wait_for("the script box", lambda: self.browser.find_element(By.ID, "explain-script"))
        box.send_keys("#!/bin/bash\n#SBATCH --gpus=h100:8\n#SBATCH -t 30\nnvidia-smi\n")
        self.browser.find_element(By.ID, "explain-run").click()
        result = wait_for("the explain table", lambda: self.text("#explain-result"), timeout=90)
        for c in CLUSTERS:
            self.assertIn(c, result)
        self.screenshot("explain", 1280)

    def test_5_every_page_fits_390_px(self):
        self.logged_in()
        job = getattr(type(self), "cancelled_job", None)
        try:
            self.viewport(390, 844)
            for page in PAGES:
                fragment = f"job/{job}" if page == "job" else page
                if page == "job" and not job:
                    rows = self.api("/v1/table?limit=1")["rows"]
                    if not rows:
                        continue
                    fragment = "job/" + rows[0]["key"]
                self.show(fragment)
                wait_for(f"{page} drawn", lambda: self.browser.find_element(By.ID, "view").text.strip())
                time.sleep(1.5)  # a poll's worth: what comes later is laid out too
                width = self.browser.execute_script("return document.documentElement.scrollWidth")
                inner = self.browser.execute_script("return window.innerWidth")
                self.assertEqual(inner, 390)
                self.assertLessEqual(width, 390, f"{page} scrolls sideways at 390 px")
                self.screenshot(page, 390)
        finally:
            self.viewport(1280, 800)


def self_clusters_of(user):
    """The clusters the user's daemon knows before any is added."""
    out = user.sky("check")
    return [line.split()[0] for line in out.stdout.splitlines()[1:] if line.strip()]


class TenThousandJobsTest(unittest.TestCase):
    """The pages with 10,000 jobs in the store and 100 clusters: measured, printed."""

    def test_the_jobs_page_loads_with_ten_thousand_jobs(self):
        user = UserDaemon("10k")
        # More clusters beside the testbed's (its six, or five without
        # epsilon), 100 in all: SSH hosts that refuse (a closed port), each a
        # card that says so.
        ready = len(self_clusters_of(user))
        with open(os.path.join(user.home, ".slurm/config"), "a") as f:
            for i in range(100 - ready):
                f.write(f"\nHost far{i:02d}\n    HostName 127.0.0.1\n    Port 1\n")
        profile = tempfile.mkdtemp(prefix="skyslurm-chromium-")
        browser = None
        try:
            # The store made by the daemon, then 10,000 ended jobs written as
            # its own rows (its schema read from the file).
            self.assertEqual(user.sky("queue").returncode, 0)
            db = sqlite3.connect(os.path.join(user.state, "skyslurmd.db"), timeout=30)
            columns = [r[1] for r in db.execute("PRAGMA table_info(jobs)")]
            now = int(time.time())
            rows = []
            for i in range(10_000):
                row = {c: 0 for c in columns}
                row.update({"sky_id": f"sky-20261206-000000-{i:012x}", "owner": "skyuser1",
                            "state": ["COMPLETED", "FAILED", "CANCELLED"][i % 3], "reason": "",
                            "cluster": CLUSTERS[i % 3], "native_id": str(100000 + i),
                            "input_json": "{}", "parent": "", "indices": "", "name": f"sweep-{i}",
                            "created": now - 86400 + i, "updated": now, "submitted": now - 86400 + i,
                            "started": now - 86000 + i, "ended": now - 80000 + i})
                rows.append(tuple(row[c] for c in columns))
            db.executemany(f"INSERT INTO jobs ({','.join(columns)}) VALUES ({','.join('?' * len(columns))})",
                           rows)
            db.commit()
            db.close()
            url = user.dashboard_url()
            browser = new_browser(profile)
            browser.get(url)
            wait_for("logged in", lambda: browser.current_url == base_of(url) + "/#/clusters")
            # Each page loaded (a reload: a hash change alone is no
            # navigation), timed from the navigation's start to what it shows.
            shown_ms, wall_ms = load_time(browser, base_of(url) + "/#/jobs",
                                          "document.querySelectorAll('#jobs-table tbody tr').length >= 50"
                                          " && (document.getElementById('page-info') || {})"
                                          ".textContent.includes('10000')")
            table_ms = fetch_time(browser, "/v1/table?limit=50")
            cards_ms, cards_wall_ms = load_time(browser, base_of(url) + "/#/clusters",
                                                "document.querySelectorAll('.cluster-card').length >= 100")
            clusters_ms = fetch_time(browser, "/v1/clusters")
            self.assertEqual(len(browser.find_elements(By.CSS_SELECTOR, ".cluster-card")), 100)
            self.assertIn("far07", browser.find_element(By.CSS_SELECTOR, '.cluster-card[data-cluster="far07"]').text)
            print(f"dashboard: the jobs page with 10,000 jobs in the store showed its first 50 rows "
                  f"{shown_ms:.0f} ms after navigation started ({wall_ms:.0f} ms as the test saw it); "
                  f"one /v1/table page {table_ms:.0f} ms; the clusters page showed its 100 cards "
                  f"{cards_ms:.0f} ms after navigation started ({cards_wall_ms:.0f} ms as the test saw "
                  f"it); one /v1/clusters {clusters_ms:.0f} ms (a process start here: "
                  f"{process_start_ms():.2f} ms)")
        finally:
            if browser:
                browser.quit()
            user.stop()
            shutil.rmtree(profile, ignore_errors=True)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(add_help=False)
    parser.add_argument("--build", required=True)
    args, rest = parser.parse_known_args()
    BUILD = os.path.abspath(args.build)
    unittest.main(argv=[sys.argv[0]] + rest, verbosity=2)
